package com.example.loot.infra;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The DataSource, in place of HikariCP: at most maximumPoolSize
 * connections in use at once (spring.datasource.hikari.maximum-pool-size),
 * a caller waiting up to 30 s for one (Hikari's connectionTimeout default)
 * and failing as Hikari does after that; autocommit on (Hikari's default,
 * so each mapper call outside a transaction commits by itself). An idle
 * connection unused for more than 500 ms is checked with isValid before
 * it is handed out (Hikari's aliveBypassWindow); a connection whose
 * statement threw is closed, not reused. Each new connection's time_zone
 * is set to the service's zone, so that the database's NOW() and
 * CURRENT_TIMESTAMP read the same wall clock as the application's
 * LocalDateTime.now() (the document: "store every DATETIME in one zone").
 */
public final class ConnectionPool {
    private static final long CONNECTION_TIMEOUT_MILLIS = 30_000;
    private static final long ALIVE_BYPASS_MILLIS = 500;

    /** SqlFunction is the work done on one borrowed connection. */
    public interface SqlFunction<T> {
        T apply(Connection c) throws SQLException;
    }

    private record Idle(Connection c, long since) {
    }

    private final String url;
    private final String user;
    private final String password;
    private final String timeZone;
    private final int maxSize;
    private final Semaphore permits;
    private final ConcurrentLinkedDeque<Idle> idle = new ConcurrentLinkedDeque<>();

    /** timeZone is a MariaDB time_zone value, e.g. "+08:00". */
    public ConnectionPool(String url, String user, String password, int maxSize, String timeZone) {
        this.url = url;
        this.user = user;
        this.password = password;
        this.maxSize = maxSize;
        this.timeZone = timeZone;
        this.permits = new Semaphore(maxSize, true);
    }

    /** with runs f on a connection of the pool and gives the connection back. */
    public <T> T with(SqlFunction<T> f) throws SQLException {
        try {
            if (!permits.tryAcquire(CONNECTION_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                throw new SQLTransientConnectionException("HikariPool-1 - Connection is not available, request timed out after "
                        + CONNECTION_TIMEOUT_MILLIS + "ms (total=" + maxSize + ", active=" + maxSize + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTransientConnectionException("interrupted waiting for a connection", e);
        }
        Connection c = null;
        boolean healthy = false;
        try {
            c = borrow();
            T result = f.apply(c);
            healthy = true;
            return result;
        } finally {
            if (c != null) {
                if (healthy) {
                    idle.push(new Idle(c, System.nanoTime()));
                } else {
                    closeQuietly(c);
                }
            }
            permits.release();
        }
    }

    private Connection borrow() throws SQLException {
        for (Idle i; (i = idle.poll()) != null; ) {
            long idleMillis = (System.nanoTime() - i.since()) / 1_000_000;
            if (idleMillis <= ALIVE_BYPASS_MILLIS || i.c().isValid(5)) {
                return i.c();
            }
            closeQuietly(i.c());
        }
        Connection c = DriverManager.getConnection(url, user, password);
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("SET time_zone = '" + timeZone + "'");
        } catch (SQLException e) {
            closeQuietly(c);
            throw e;
        }
        return c;
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // The connection is being dropped because it failed; its close
            // failing too says nothing new.
        }
    }
}
