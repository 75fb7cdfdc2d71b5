package com.example.loot.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The part of Spring Data Redis's StringRedisTemplate the document calls,
 * with the same names so LootSettleService reads as the document writes
 * it: opsForValue().setIfAbsent(key, value, ttl) is SET key value NX PX
 * ttl, opsForValue().get(key) is GET, delete(key) is DEL. Connections are
 * pooled (an idle one is reused, a failed one closed); a connection or
 * timeout failure throws UncheckedIOException, as Spring throws its
 * (unchecked) RedisConnectionFailureException, and the request fails.
 */
public final class StringRedisTemplate {
    private final String host;
    private final int port;
    private final int timeoutMillis;
    private final String password;
    private final int database;
    private final ConcurrentLinkedDeque<RespConnection> idle = new ConcurrentLinkedDeque<>();
    private final ValueOperations values = new ValueOperations();

    /** password empty: no AUTH; database 0: no SELECT. */
    public StringRedisTemplate(String host, int port, int timeoutMillis, String password, int database) {
        this.host = host;
        this.port = port;
        this.timeoutMillis = timeoutMillis;
        this.password = password;
        this.database = database;
    }

    /** ValueOperations is opsForValue(). */
    public final class ValueOperations {
        /** setIfAbsent is SET key value NX PX ttl: true when the key was set. */
        public Boolean setIfAbsent(String key, String value, Duration timeout) {
            return "OK".equals(call("SET", key, value, "NX", "PX", Long.toString(timeout.toMillis())));
        }

        /** get is GET: the value, or null when the key does not exist. */
        public String get(String key) {
            return (String) call("GET", key);
        }
    }

    public ValueOperations opsForValue() {
        return values;
    }

    /** delete is DEL: true when a key was removed. */
    public Boolean delete(String key) {
        return ((Long) call("DEL", key)) > 0;
    }

    private Object call(String... args) {
        RespConnection c = idle.poll();
        try {
            if (c == null) {
                c = open();
            }
            Object reply = c.command(args);
            idle.push(c);
            return reply;
        } catch (IOException e) {
            if (c != null) {
                c.close();
            }
            throw new UncheckedIOException("redis " + args[0] + " on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private RespConnection open() throws IOException {
        RespConnection c = new RespConnection(host, port, timeoutMillis);
        try {
            if (!password.isEmpty()) {
                c.command("AUTH", password);
            }
            if (database != 0) {
                c.command("SELECT", Integer.toString(database));
            }
            return c;
        } catch (IOException e) {
            c.close();
            throw e;
        }
    }
}
