-- 文件路径：src/main/resources/schema.sql
CREATE TABLE IF NOT EXISTS loot_session (
  id BIGINT NOT NULL AUTO_INCREMENT,
  session_no VARCHAR(64) NOT NULL COMMENT '分配会话号，业务唯一键',
  dungeon_code VARCHAR(64) NOT NULL COMMENT '副本编码',
  loot_code VARCHAR(64) NOT NULL COMMENT '掉落物编码',
  total_quantity INT NOT NULL COMMENT '掉落总数量',
  allocated_quantity INT NOT NULL DEFAULT 0 COMMENT '已分配数量',
  mode VARCHAR(16) NOT NULL COMMENT '分配模式：NEED_GREED/BID/LEADER',
  status VARCHAR(16) NOT NULL COMMENT 'OPEN/CLAIMING/SETTLING/CLOSED/CANCELED',
  rule_version VARCHAR(16) NOT NULL DEFAULT 'v1' COMMENT '结算规则版本号',
  deadline_at DATETIME NOT NULL COMMENT '表态截止时间',
  version INT NOT NULL DEFAULT 0 COMMENT '乐观锁版本',
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uk_session_no (session_no),
  KEY idx_status_deadline (status, deadline_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '掉落分配会话';

CREATE TABLE IF NOT EXISTS loot_intent (
  id BIGINT NOT NULL AUTO_INCREMENT,
  session_no VARCHAR(64) NOT NULL COMMENT '分配会话号',
  player_id BIGINT NOT NULL COMMENT '玩家 ID',
  intent_type VARCHAR(16) NOT NULL COMMENT 'NEED/GREED/PASS',
  priority INT NOT NULL DEFAULT 0 COMMENT '需求优先级，越大越优先',
  fair_score INT NOT NULL DEFAULT 0 COMMENT '历史获取次数，越小越优先',
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uk_session_player (session_no, player_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '玩家表态记录';

CREATE TABLE IF NOT EXISTS loot_grant (
  id BIGINT NOT NULL AUTO_INCREMENT,
  grant_no VARCHAR(96) NOT NULL COMMENT '幂等键：sessionNo:playerId:lootCode',
  session_no VARCHAR(64) NOT NULL COMMENT '分配会话号',
  player_id BIGINT NOT NULL COMMENT '玩家 ID',
  loot_code VARCHAR(64) NOT NULL COMMENT '掉落物编码',
  quantity INT NOT NULL DEFAULT 1 COMMENT '发放数量',
  status VARCHAR(16) NOT NULL COMMENT 'PENDING/SUCCESS/FAILED',
  retry_count INT NOT NULL DEFAULT 0 COMMENT '补偿重试次数',
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (id),
  UNIQUE KEY uk_grant_no (grant_no),
  KEY idx_status (status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT '发放记录，幂等键唯一';
