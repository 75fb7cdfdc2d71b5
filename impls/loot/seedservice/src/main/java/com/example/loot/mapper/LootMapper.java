// 文件路径：src/main/java/com/example/loot/mapper/LootMapper.java
package com.example.loot.mapper;

import com.example.loot.domain.LootIntent;
import com.example.loot.infra.ConnectionPool;
import com.example.loot.infra.Statement;

import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;

// The document's MyBatis @Mapper interface as a class: each annotated
// statement is kept as the document writes it (#{name} placeholders, text
// blocks), and each method runs it the way MyBatis-Spring does outside a
// transaction: on a connection of its own from the pool, autocommitted.
// The first five statements are the document's (sections 5.3 and 5.4);
// the last five are not in it and are written as the project's Go
// transcription (ref/loot/mysql/docsql) writes them, word for word, so the
// two agree (seedservice_test.go checks both against docsql).
public class LootMapper {
    private final ConnectionPool pool;

    public LootMapper(ConnectionPool pool) {
        this.pool = pool;
    }

    // @Insert
    static final Statement UPSERT_INTENT = Statement.of("upsertIntent", """
            INSERT INTO loot_intent (session_no, player_id, intent_type, priority, fair_score, created_at)
            VALUES (#{sessionNo}, #{playerId}, #{intentType}, #{priority}, #{fairScore}, #{createdAt})
            ON DUPLICATE KEY UPDATE
            intent_type = VALUES(intent_type),
            priority = VALUES(priority),
            fair_score = VALUES(fair_score)
            """);

    public int upsertIntent(LootIntent intent) throws SQLException {
        return UPSERT_INTENT.update(pool, Map.of(
                "sessionNo", intent.sessionNo(), "playerId", intent.playerId(),
                "intentType", intent.intentType(), "priority", intent.priority(),
                "fairScore", intent.fairScore(), "createdAt", intent.createdAt()));
    }

    // @Update
    static final Statement LOCK_FOR_SETTLE = Statement.of("lockForSettle", """
            UPDATE loot_session
            SET status = 'SETTLING', version = version + 1
            WHERE session_no = #{sessionNo}
            AND status = 'CLAIMING'
            AND deadline_at <= NOW()
            """);

    public int lockForSettle(String sessionNo) throws SQLException {
        return LOCK_FOR_SETTLE.update(pool, Map.of("sessionNo", sessionNo));
    }

    // @Select
    static final Statement SELECT_RANKED = Statement.of("selectRanked", """
            SELECT player_id AS playerId, fair_score AS fairScore
            FROM loot_intent
            WHERE session_no = #{sessionNo}
            AND intent_type <> 'PASS'
            ORDER BY priority DESC, fair_score ASC, created_at ASC
            """);

    public List<Map<String, Object>> selectRanked(String sessionNo) throws SQLException {
        return SELECT_RANKED.select(pool, Map.of("sessionNo", sessionNo));
    }

    // @Insert (5.4, "补在 Mapper 里")
    static final Statement INSERT_GRANT_IGNORE = Statement.of("insertGrantIgnore", """
            INSERT INTO loot_grant (grant_no, session_no, player_id, loot_code, quantity, status)
            VALUES (#{grantNo}, #{sessionNo}, #{playerId}, #{lootCode}, 1, 'PENDING')
            ON DUPLICATE KEY UPDATE updated_at = updated_at
            """);

    public int insertGrantIgnore(String grantNo, String sessionNo, long playerId, String lootCode) throws SQLException {
        return INSERT_GRANT_IGNORE.update(pool, Map.of(
                "grantNo", grantNo, "sessionNo", sessionNo, "playerId", playerId, "lootCode", lootCode));
    }

    // @Update
    static final Statement MARK_CLOSED = Statement.of("markClosed", """
            UPDATE loot_session
            SET status = 'CLOSED', allocated_quantity = #{allocated}, version = version + 1
            WHERE session_no = #{sessionNo}
            AND status = 'SETTLING'
            """);

    public int markClosed(String sessionNo, int allocated) throws SQLException {
        return MARK_CLOSED.update(pool, Map.of("sessionNo", sessionNo, "allocated", allocated));
    }

    // Not in the document: 4.1's "create a loot_session row with the
    // dungeon, the loot code, the total quantity, the mode and the
    // deadline", opened straight to CLAIMING (the document shows no
    // OPEN -> CLAIMING step).
    static final Statement CREATE_SESSION = Statement.of("createSession", """
            INSERT INTO loot_session (session_no, dungeon_code, loot_code, total_quantity, mode, status, deadline_at)
            VALUES (#{sessionNo}, #{dungeonCode}, #{lootCode}, #{totalQuantity}, 'NEED_GREED', 'CLAIMING', #{deadlineAt})
            """);

    public int createSession(String sessionNo, String dungeonCode, String lootCode, int totalQuantity,
                             LocalDateTime deadlineAt) throws SQLException {
        return CREATE_SESSION.update(pool, Map.of("sessionNo", sessionNo, "dungeonCode", dungeonCode,
                "lootCode", lootCode, "totalQuantity", totalQuantity, "deadlineAt", deadlineAt));
    }

    // Not in the document: submitIntent's "check the session's status and
    // deadline first" (5.5) reads the row; the service judges it.
    static final Statement CHECK_INTENT = Statement.of("checkIntent", """
            SELECT status, deadline_at FROM loot_session WHERE session_no = #{sessionNo}
            """);

    public Map<String, Object> selectSessionForIntent(String sessionNo) throws SQLException {
        List<Map<String, Object>> rows = CHECK_INTENT.select(pool, Map.of("sessionNo", sessionNo));
        return rows.isEmpty() ? null : rows.get(0);
    }

    // Not in the document: LootSessionStatus's transitions to CANCELED
    // (from OPEN, CLAIMING or SETTLING) as one conditional UPDATE.
    static final Statement CANCEL = Statement.of("cancel", """
            UPDATE loot_session
            SET status = 'CANCELED'
            WHERE session_no = #{sessionNo}
            AND status IN ('OPEN', 'CLAIMING', 'SETTLING')
            """);

    public int cancel(String sessionNo) throws SQLException {
        return CANCEL.update(pool, Map.of("sessionNo", sessionNo));
    }

    // Not in the document: 4.5's compensation job, "a timed task scans
    // PENDING records".
    static final Statement SELECT_PENDING = Statement.of("selectPending", """
            SELECT grant_no, session_no, player_id, loot_code FROM loot_grant
            WHERE status = 'PENDING'
            ORDER BY id
            """);

    public List<Map<String, Object>> selectPending() throws SQLException {
        return SELECT_PENDING.select(pool, Map.of());
    }

    // Not in the document: a grant the inventory applied.
    static final Statement MARK_SUCCESS = Statement.of("markSuccess", """
            UPDATE loot_grant SET status = 'SUCCESS' WHERE grant_no = #{grantNo}
            """);

    public int markSuccess(String grantNo) throws SQLException {
        return MARK_SUCCESS.update(pool, Map.of("grantNo", grantNo));
    }
}
