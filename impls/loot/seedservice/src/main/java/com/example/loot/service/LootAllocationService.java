// 文件路径：src/main/java/com/example/loot/service/LootAllocationService.java
package com.example.loot.service;

import com.example.loot.domain.LootIntent;
import com.example.loot.mapper.LootMapper;

import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.time.LocalDateTime;
import java.util.Map;

// The document names this class (3.2) and its submitIntent (5.5) but does
// not show them. submitIntent is written as 5.5 describes it: "check the
// session's status and deadline first, then call upsertIntent; the order
// must not be reversed", the deadline judged by the application's clock
// (LocalDateTime.now(), as LootIntent stamps created_at), two statements
// with nothing between them. It checks no membership: the text lists the
// team check among 4.2's duties, but its schema keeps no member snapshot
// and 5.5 names only the status and the deadline. openSession and cancel
// are additions a runnable service needs (README.md, "Additions").
public class LootAllocationService {
    private final LootMapper lootMapper;

    public LootAllocationService(LootMapper lootMapper) {
        this.lootMapper = lootMapper;
    }

    public boolean submitIntent(String sessionNo, long playerId, String type, int fairScore) throws SQLException {
        Map<String, Object> session = lootMapper.selectSessionForIntent(sessionNo);
        if (session == null || !"CLAIMING".equals(session.get("status"))) {
            return false;
        }
        LocalDateTime deadline = (LocalDateTime) session.get("deadline_at");
        if (!LocalDateTime.now().isBefore(deadline)) {
            return false;
        }
        LootIntent intent = switch (type) {
            case "NEED" -> LootIntent.need(sessionNo, playerId, fairScore);
            case "GREED" -> LootIntent.greed(sessionNo, playerId, fairScore);
            // PASS (and any other type) has no factory in the document:
            // priority 0, the record's default; selectRanked drops PASS.
            default -> new LootIntent(sessionNo, playerId, type, 0, fairScore, LocalDateTime.now());
        };
        lootMapper.upsertIntent(intent);
        return true;
    }

    // openSession is 4.1's session creation: the deadline is the
    // application's now plus the claim window. false: the session number
    // exists (uk_session_no), and nothing was written.
    public boolean openSession(String sessionNo, String dungeonCode, String lootCode, int totalQuantity,
                               int claimWindowSeconds) throws SQLException {
        LocalDateTime deadline = LocalDateTime.now().plusSeconds(claimWindowSeconds);
        try {
            lootMapper.createSession(sessionNo, dungeonCode, lootCode, totalQuantity, deadline);
            return true;
        } catch (SQLIntegrityConstraintViolationException e) {
            return false;
        } catch (SQLException e) {
            if (e.getErrorCode() == 1062) { // ER_DUP_ENTRY
                return false;
            }
            throw e;
        }
    }

    // cancel is LootSessionStatus's move to CANCELED: true when the
    // session was OPEN, CLAIMING or SETTLING and is now CANCELED.
    public boolean cancel(String sessionNo) throws SQLException {
        return lootMapper.cancel(sessionNo) == 1;
    }
}
