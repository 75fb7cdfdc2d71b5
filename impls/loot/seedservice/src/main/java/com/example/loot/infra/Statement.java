package com.example.loot.infra;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One mapper statement, in place of MyBatis: the SQL as written, with
 * #{name} placeholders, run as a JDBC PreparedStatement whose ? are the
 * placeholders in order, bound from a map by name (setObject, as MyBatis's
 * type handlers do: LocalDateTime as LocalDateTime). A select returns one
 * map per row keyed by column label (MyBatis's Map result), DATETIME
 * columns read as LocalDateTime.
 */
public final class Statement {
    private static final Pattern PLACEHOLDER = Pattern.compile("#\\{(\\w+)\\}");

    private final String name;
    private final String sql;
    private final List<String> params;

    private Statement(String name, String sql, List<String> params) {
        this.name = name;
        this.sql = sql;
        this.params = params;
    }

    /** of parses mapper, the statement as the mapper writes it. */
    public static Statement of(String name, String mapper) {
        List<String> params = new ArrayList<>();
        Matcher m = PLACEHOLDER.matcher(mapper);
        while (m.find()) {
            params.add(m.group(1));
        }
        return new Statement(name, m.replaceAll("?"), List.copyOf(params));
    }

    public String name() {
        return name;
    }

    /** update runs the statement and returns the rows it affected. */
    public int update(ConnectionPool pool, Map<String, Object> args) throws SQLException {
        return pool.with(c -> {
            try (PreparedStatement ps = prepare(c, args)) {
                return ps.executeUpdate();
            }
        });
    }

    /** select runs the query and returns its rows in the order the database returned them. */
    public List<Map<String, Object>> select(ConnectionPool pool, Map<String, Object> args) throws SQLException {
        return pool.with(c -> {
            try (PreparedStatement ps = prepare(c, args); ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                List<Map<String, Object>> rows = new ArrayList<>();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        int type = md.getColumnType(i);
                        Object v = type == Types.TIMESTAMP || type == Types.DATE
                                ? rs.getObject(i, LocalDateTime.class) : rs.getObject(i);
                        row.put(md.getColumnLabel(i), v);
                    }
                    rows.add(row);
                }
                return rows;
            }
        });
    }

    private PreparedStatement prepare(Connection c, Map<String, Object> args) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        try {
            for (int i = 0; i < params.size(); i++) {
                String p = params.get(i);
                if (!args.containsKey(p)) {
                    throw new SQLException(name + ": no value for #{" + p + "}");
                }
                ps.setObject(i + 1, args.get(p));
            }
            return ps;
        } catch (SQLException e) {
            ps.close();
            throw e;
        }
    }
}
