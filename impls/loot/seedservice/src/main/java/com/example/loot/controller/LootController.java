// 文件路径：src/main/java/com/example/loot/controller/LootController.java
package com.example.loot.controller;

import com.example.loot.service.LootAllocationService;
import com.example.loot.service.LootCompensationService;
import com.example.loot.service.LootSettleService;

import java.util.Map;

// The document's @RestController @RequestMapping("/api/loot"): intent and
// settle are its methods as written (LootApplication routes POST
// /api/loot/intent and /api/loot/settle to them, as @PostMapping did).
// open, cancel and compensate are additions (README.md, "Additions").
public class LootController {
    private final LootAllocationService allocationService;
    private final LootSettleService settleService;
    private final LootCompensationService compensationService;
    private final int claimWindowSeconds;

    public LootController(LootAllocationService allocationService,
                          LootSettleService settleService,
                          LootCompensationService compensationService,
                          int claimWindowSeconds) {
        this.allocationService = allocationService;
        this.settleService = settleService;
        this.compensationService = compensationService;
        this.claimWindowSeconds = claimWindowSeconds;
    }

    // @PostMapping("/intent")
    public Map<String, Object> intent(Map<String, Object> body) throws Exception {
        String sessionNo = String.valueOf(body.get("sessionNo"));
        long playerId = Long.parseLong(String.valueOf(body.get("playerId")));
        String type = String.valueOf(body.getOrDefault("intentType", "NEED"));
        int fairScore = Integer.parseInt(String.valueOf(body.getOrDefault("fairScore", 0)));
        boolean accepted = allocationService.submitIntent(sessionNo, playerId, type, fairScore);
        return Map.of("code", accepted ? 0 : 1001, "accepted", accepted);
    }

    // @PostMapping("/settle")
    public Map<String, Object> settle(Map<String, Object> body) throws Exception {
        String sessionNo = String.valueOf(body.get("sessionNo"));
        String lootCode = String.valueOf(body.get("lootCode"));
        int quantity = Integer.parseInt(String.valueOf(body.getOrDefault("quantity", 1)));
        settleService.settle(sessionNo, lootCode, quantity);
        return Map.of("code", 0, "message", "settle triggered");
    }

    // Addition, @PostMapping("/sessions"): opens a session in CLAIMING, its
    // deadline claimWindowSeconds (default loot.settle.claim-window-seconds)
    // from now. members is read and not kept: the document's schema has no
    // table for a member snapshot, and submitIntent checks none.
    public Map<String, Object> open(Map<String, Object> body) throws Exception {
        String sessionNo = String.valueOf(body.get("sessionNo"));
        String dungeonCode = String.valueOf(body.getOrDefault("dungeonCode", "D"));
        String lootCode = String.valueOf(body.get("lootCode"));
        int quantity = Integer.parseInt(String.valueOf(body.getOrDefault("quantity", 1)));
        int window = Integer.parseInt(String.valueOf(body.getOrDefault("claimWindowSeconds", claimWindowSeconds)));
        boolean created = allocationService.openSession(sessionNo, dungeonCode, lootCode, quantity, window);
        return Map.of("code", created ? 0 : 1002, "created", created);
    }

    // Addition, @PostMapping("/cancel").
    public Map<String, Object> cancel(Map<String, Object> body) throws Exception {
        String sessionNo = String.valueOf(body.get("sessionNo"));
        boolean canceled = allocationService.cancel(sessionNo);
        return Map.of("code", canceled ? 0 : 1001, "canceled", canceled);
    }

    // Addition, @PostMapping("/compensate"): one pass of the compensation
    // job now, as its timer would run it.
    public Map<String, Object> compensate(Map<String, Object> body) throws Exception {
        LootCompensationService.Pass p = compensationService.compensate();
        return Map.of("code", 0, "pending", p.pending(), "delivered", p.delivered(), "failed", p.failed());
    }
}
