// 文件路径：src/main/java/com/example/loot/service/LootSettleService.java
package com.example.loot.service;

import com.example.loot.infra.StringRedisTemplate;
import com.example.loot.mapper.LootMapper;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

// The document's class, statement for statement. Changed: no Spring
// annotations (@Service; the two @Value parameters are passed by
// LootApplication from loot.settle.lock-key-prefix and
// loot.settle.lock-expire-millis); settle declares the SQLException the
// JDBC mapper throws where MyBatis-Spring throws an unchecked
// DataAccessException. The document imports @Transactional but does not
// put it on settle, so each statement commits on its own.
public class LootSettleService {
    private final LootMapper lootMapper;
    private final StringRedisTemplate redisTemplate;
    private final String lockPrefix;
    private final long lockExpireMillis;

    public LootSettleService(LootMapper lootMapper,
                             StringRedisTemplate redisTemplate,
                             String lockPrefix,
                             long lockExpireMillis) {
        this.lootMapper = lootMapper;
        this.redisTemplate = redisTemplate;
        this.lockPrefix = lockPrefix;
        this.lockExpireMillis = lockExpireMillis;
    }

    public void settle(String sessionNo, String lootCode, int totalQuantity) throws SQLException {
        String lockKey = lockPrefix + sessionNo;
        String token = UUID.randomUUID().toString();
        Boolean locked = redisTemplate.opsForValue()
                .setIfAbsent(lockKey, token, Duration.ofMillis(lockExpireMillis));
        if (!Boolean.TRUE.equals(locked)) {
            // 没抢到锁说明别人正在结算，直接返回，由对方推进状态
            return;
        }
        try {
            int affected = lootMapper.lockForSettle(sessionNo);
            if (affected == 0) {
                // 状态已被推进或还未到截止时间，本次不结算
                return;
            }
            List<Map<String, Object>> ranked = lootMapper.selectRanked(sessionNo);
            int grantCount = Math.min(totalQuantity, ranked.size());
            for (int i = 0; i < grantCount; i++) {
                long playerId = ((Number) ranked.get(i).get("playerId")).longValue();
                String grantNo = sessionNo + ":" + playerId + ":" + lootCode;
                lootMapper.insertGrantIgnore(grantNo, sessionNo, playerId, lootCode);
            }
            lootMapper.markClosed(sessionNo, grantCount);
        } finally {
            // 只有持有者才能释放锁，避免误删别人的锁
            String current = redisTemplate.opsForValue().get(lockKey);
            if (token.equals(current)) {
                redisTemplate.delete(lockKey);
            }
        }
    }
}
