package com.example.loot.infra;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

/**
 * The service's configuration, read as Spring Boot reads it, highest
 * first: a command-line argument --key=value, then an environment
 * variable named by Spring's relaxed binding (dots become underscores,
 * dashes are dropped, upper case: loot.settle.lock-expire-millis is
 * LOOT_SETTLE_LOCKEXPIREMILLIS), then application.properties on the
 * class path. Unlike Spring, a key that application.properties does not
 * define is refused (a misspelt argument would otherwise be ignored).
 */
public final class Config {
    /** ConfigException is bad configuration: the service exits 2. */
    public static final class ConfigException extends Exception {
        public ConfigException(String message) {
            super(message);
        }
    }

    private final Properties values;

    private Config(Properties values) {
        this.values = values;
    }

    public static Config load(String[] args, Map<String, String> env) throws ConfigException {
        Properties p = new Properties();
        try (InputStream in = Config.class.getResourceAsStream("/application.properties")) {
            if (in == null) {
                throw new ConfigException("application.properties is not on the class path");
            }
            p.load(in);
        } catch (IOException e) {
            throw new ConfigException("application.properties: " + e.getMessage());
        }
        for (String k : new TreeSet<>(p.stringPropertyNames())) {
            String e = env.get(envName(k));
            if (e != null) {
                p.setProperty(k, e);
            }
        }
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) {
                throw new ConfigException("argument " + a + ": want --key=value");
            }
            String k = a.substring(2, eq);
            if (!p.containsKey(k)) {
                throw new ConfigException("argument " + a + ": no such key (the keys are application.properties')");
            }
            p.setProperty(k, a.substring(eq + 1));
        }
        return new Config(p);
    }

    /** envName is key's environment variable under Spring's relaxed binding. */
    static String envName(String key) {
        return key.replace(".", "_").replace("-", "").toUpperCase();
    }

    public String string(String key) {
        return values.getProperty(key);
    }

    public int integer(String key) throws ConfigException {
        try {
            return Integer.parseInt(string(key).trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key + "=" + string(key) + ": not an integer");
        }
    }

    public long longValue(String key) throws ConfigException {
        try {
            return Long.parseLong(string(key).trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key + "=" + string(key) + ": not an integer");
        }
    }

    /** millis reads a duration as Spring does: a number of ms, or with a unit ms or s. */
    public long millis(String key) throws ConfigException {
        String v = string(key).trim();
        try {
            if (v.endsWith("ms")) {
                return Long.parseLong(v.substring(0, v.length() - 2));
            }
            if (v.endsWith("s")) {
                return Long.parseLong(v.substring(0, v.length() - 1)) * 1000;
            }
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new ConfigException(key + "=" + v + ": not a duration (ms or s)");
        }
    }
}
