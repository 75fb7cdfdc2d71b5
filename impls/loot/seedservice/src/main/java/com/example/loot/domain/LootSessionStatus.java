// 文件路径：src/main/java/com/example/loot/domain/LootSessionStatus.java
package com.example.loot.domain;

import java.util.Set;

public enum LootSessionStatus {
    OPEN, CLAIMING, SETTLING, CLOSED, CANCELED;

    private static final Set<String> ALLOWED = Set.of(
            "OPEN->CLAIMING", "CLAIMING->SETTLING", "SETTLING->CLOSED",
            "OPEN->CANCELED", "CLAIMING->CANCELED", "SETTLING->CANCELED"
    );

    public boolean canTransitTo(LootSessionStatus target) {
        return ALLOWED.contains(this.name() + "->" + target.name());
    }
}
