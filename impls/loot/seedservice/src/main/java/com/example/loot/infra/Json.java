package com.example.loot.infra;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON in place of Jackson, for the controller's Map bodies. parse gives
 * what Jackson's default binding to Object gives: objects as
 * LinkedHashMap (null values kept), arrays as ArrayList, integers as
 * Integer, Long or BigInteger (the smallest that holds them), other
 * numbers as Double, true/false as Boolean. The controller's
 * String.valueOf(...) then reads a value as it would under Spring.
 */
public final class Json {
    /** JsonException is a body that is not JSON: Spring answers it 400. */
    public static final class JsonException extends Exception {
        JsonException(String message) {
            super(message);
        }
    }

    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    public static Object parse(String s) throws JsonException {
        Json p = new Json(s);
        p.space();
        Object v;
        try {
            v = p.value();
        } catch (StackOverflowError e) {
            // Nesting deeper than the thread's stack: Jackson refuses
            // nesting past its limit as a parse error too (a 400).
            throw new JsonException("nested too deeply");
        }
        p.space();
        if (p.i != s.length()) {
            throw new JsonException("trailing characters at " + p.i);
        }
        return v;
    }

    private void space() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private JsonException bad(String what) {
        return new JsonException(what + " at " + i);
    }

    private Object value() throws JsonException {
        if (i >= s.length()) {
            throw bad("unexpected end");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw bad("unexpected '" + c + "'");
        }
    }

    private Object word(String w, Object v) throws JsonException {
        if (!s.startsWith(w, i)) {
            throw bad("bad literal");
        }
        i += w.length();
        return v;
    }

    private Map<String, Object> object() throws JsonException {
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return m;
        }
        while (true) {
            space();
            if (i >= s.length() || s.charAt(i) != '"') {
                throw bad("expected a key");
            }
            String k = string();
            space();
            expect(':');
            space();
            m.put(k, value());
            space();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                continue;
            }
            expect('}');
            return m;
        }
    }

    private List<Object> array() throws JsonException {
        List<Object> a = new ArrayList<>();
        i++;
        space();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return a;
        }
        while (true) {
            space();
            a.add(value());
            space();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                continue;
            }
            expect(']');
            return a;
        }
    }

    private void expect(char c) throws JsonException {
        if (i >= s.length() || s.charAt(i) != c) {
            throw bad("expected '" + c + "'");
        }
        i++;
    }

    private String string() throws JsonException {
        StringBuilder b = new StringBuilder();
        i++;
        while (true) {
            if (i >= s.length()) {
                throw bad("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c < 0x20) {
                throw bad("control character in string");
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw bad("unterminated escape");
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> b.append(e);
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'u' -> {
                    if (i + 4 > s.length()) {
                        throw bad("short \\u escape");
                    }
                    try {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    } catch (NumberFormatException x) {
                        throw bad("bad \\u escape");
                    }
                    i += 4;
                }
                default -> throw bad("bad escape");
            }
        }
    }

    private Object number() throws JsonException {
        int start = i;
        if (s.charAt(i) == '-') {
            i++;
        }
        boolean integral = true;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                i++;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                integral = false;
                i++;
            } else {
                break;
            }
        }
        String t = s.substring(start, i);
        try {
            if (!integral) {
                return new BigDecimal(t).doubleValue();
            }
            BigInteger v = new BigInteger(t);
            if (v.bitLength() < 32) {
                return v.intValue();
            }
            if (v.bitLength() < 64) {
                return v.longValue();
            }
            return v;
        } catch (NumberFormatException x) {
            throw bad("bad number");
        }
    }

    /** write renders maps, lists, strings, numbers, booleans and null. */
    public static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v);
        return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                quote(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int k = 0; k < l.size(); k++) {
                if (k > 0) {
                    b.append(',');
                }
                write(b, l.get(k));
            }
            b.append(']');
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else {
            quote(b, v.toString());
        }
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
