// 文件路径：src/main/java/com/example/loot/domain/LootIntent.java
package com.example.loot.domain;

import java.time.LocalDateTime;

public record LootIntent(
        String sessionNo,
        long playerId,
        String intentType,
        int priority,
        int fairScore,
        LocalDateTime createdAt
) {
    public static LootIntent need(String sessionNo, long playerId, int fairScore) {
        return new LootIntent(sessionNo, playerId, "NEED", 10, fairScore, LocalDateTime.now());
    }

    public static LootIntent greed(String sessionNo, long playerId, int fairScore) {
        return new LootIntent(sessionNo, playerId, "GREED", 1, fairScore, LocalDateTime.now());
    }
}
