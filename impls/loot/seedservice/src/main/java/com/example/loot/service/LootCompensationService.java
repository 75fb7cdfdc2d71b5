package com.example.loot.service;

import com.example.loot.infra.Inventory;
import com.example.loot.mapper.LootMapper;

import java.sql.SQLException;
import java.util.List;
import java.util.Map;

// Not in the document's code: 4.5's compensation job ("the grant stays
// PENDING and a timed task scans and compensates it, de-duplicated by the
// same idempotency key") and 8.2's "putting the item into the player's
// bag happens after commit". The document's settle only inserts PENDING
// grants, so this job is the only thing that delivers. Each PENDING grant,
// in row order, is delivered under its grant_no and then marked SUCCESS;
// a failed delivery stays PENDING for the next pass. It reads nothing of
// the session (a grant of a session canceled after its grants were
// written is delivered), and retry_count is never written: the document
// shows neither.
public class LootCompensationService {
    private final LootMapper lootMapper;
    private final Inventory inventory;

    public LootCompensationService(LootMapper lootMapper, Inventory inventory) {
        this.lootMapper = lootMapper;
        this.inventory = inventory;
    }

    /** Pass is what one compensation pass did. */
    public record Pass(int pending, int delivered, int failed) {
    }

    public Pass compensate() throws SQLException {
        List<Map<String, Object>> pending = lootMapper.selectPending();
        int delivered = 0;
        for (Map<String, Object> g : pending) {
            String grantNo = (String) g.get("grant_no");
            try {
                inventory.deliver(grantNo, (String) g.get("session_no"),
                        ((Number) g.get("player_id")).longValue(), (String) g.get("loot_code"), 1);
                lootMapper.markSuccess(grantNo);
                delivered++;
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                System.err.println("compensate " + grantNo + ": " + e);
            }
        }
        return new Pass(pending.size(), delivered, pending.size() - delivered);
    }
}
