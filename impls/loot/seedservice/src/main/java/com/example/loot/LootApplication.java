// 文件路径：src/main/java/com/example/loot/LootApplication.java
package com.example.loot;

import com.example.loot.controller.LootController;
import com.example.loot.infra.Config;
import com.example.loot.infra.ConnectionPool;
import com.example.loot.infra.Inventory;
import com.example.loot.infra.StringRedisTemplate;
import com.example.loot.infra.Web;
import com.example.loot.mapper.LootMapper;
import com.example.loot.service.LootAllocationService;
import com.example.loot.service.LootCompensationService;
import com.example.loot.service.LootSettleService;
import com.sun.net.httpserver.HttpServer;

import java.net.InetSocketAddress;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.TimeZone;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

// What @SpringBootApplication did for the document: read the
// configuration, build the beans in dependency order, route the
// controller's paths, start the server and the compensation timer. It
// logs one line when it listens: "LootApplication started on HOST:PORT".
public class LootApplication {
    // Tomcat's default maximum of request threads under Spring Boot.
    private static final int REQUEST_THREADS = 200;

    public static void main(String[] args) throws Exception {
        Config cfg;
        try {
            cfg = Config.load(args, System.getenv());
            run(cfg);
        } catch (Config.ConfigException e) {
            System.err.println("LootApplication: " + e.getMessage());
            System.exit(2);
        }
    }

    private static void run(Config cfg) throws Exception {
        // One zone for every time (4.1): the JVM's, for LocalDateTime.now(),
        // and each connection's time_zone, for NOW() and CURRENT_TIMESTAMP.
        ZoneId zone;
        try {
            zone = ZoneId.of(cfg.string("loot.time-zone"));
        } catch (Exception e) {
            throw new Config.ConfigException("loot.time-zone=" + cfg.string("loot.time-zone") + ": " + e.getMessage());
        }
        TimeZone.setDefault(TimeZone.getTimeZone(zone));
        ZoneOffset offset = zone.getRules().getOffset(Instant.now());
        String sqlZone = offset.getTotalSeconds() == 0 ? "+00:00" : offset.getId();

        ConnectionPool pool = new ConnectionPool(cfg.string("spring.datasource.url"),
                cfg.string("spring.datasource.username"), cfg.string("spring.datasource.password"),
                cfg.integer("spring.datasource.hikari.maximum-pool-size"), sqlZone);
        StringRedisTemplate redis = new StringRedisTemplate(cfg.string("spring.data.redis.host"),
                cfg.integer("spring.data.redis.port"), (int) cfg.millis("spring.data.redis.timeout"),
                cfg.string("spring.data.redis.password"), cfg.integer("spring.data.redis.database"));
        LootMapper mapper = new LootMapper(pool);
        LootSettleService settle = new LootSettleService(mapper, redis,
                cfg.string("loot.settle.lock-key-prefix"), cfg.longValue("loot.settle.lock-expire-millis"));
        LootAllocationService allocation = new LootAllocationService(mapper);
        LootCompensationService compensation = new LootCompensationService(mapper,
                new Inventory(cfg.string("loot.inventory.url"), cfg.longValue("loot.inventory.timeout-millis")));
        LootController controller = new LootController(allocation, settle, compensation,
                cfg.integer("loot.settle.claim-window-seconds"));

        Web web = new Web();
        web.post("/api/loot/intent", controller::intent);
        web.post("/api/loot/settle", controller::settle);
        web.post("/api/loot/sessions", controller::open);
        web.post("/api/loot/cancel", controller::cancel);
        web.post("/api/loot/compensate", controller::compensate);

        HttpServer server = HttpServer.create(
                new InetSocketAddress(cfg.string("server.address"), cfg.integer("server.port")), 0);
        server.setExecutor(Executors.newFixedThreadPool(REQUEST_THREADS));
        web.mount(server);
        server.start();

        // @Scheduled(fixedDelay = loot.compensate.interval-millis); 0: off.
        long every = cfg.longValue("loot.compensate.interval-millis");
        if (every > 0) {
            ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
            timer.scheduleWithFixedDelay(() -> {
                try {
                    compensation.compensate();
                } catch (Exception e) {
                    // Spring's scheduler logs a failed run and runs the next.
                    System.err.println("compensation pass failed: " + e);
                }
            }, every, every, TimeUnit.MILLISECONDS);
        }
        InetSocketAddress at = server.getAddress();
        System.out.println("LootApplication started on " + at.getHostString() + ":" + at.getPort());
    }
}
