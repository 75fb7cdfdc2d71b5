package com.example.loot.infra;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The routing Spring MVC does for the controller, on the JDK's HTTP
 * server: POST path with a JSON object body (@PostMapping +
 * @RequestBody Map), answered 200 with the handler's map as JSON. The
 * failures answer as Spring Boot's defaults do, with its error body
 * {"timestamp","status","error","path"}: an unknown path 404, another
 * method 405, a Content-Type other than JSON 415, a body that is not a
 * JSON object 400, and any exception the handler throws 500 (logged with
 * its stack trace, as Spring logs it).
 */
public final class Web {
    /** Handler is a controller method: the body in, the answer's map out. */
    public interface Handler {
        Map<String, Object> handle(Map<String, Object> body) throws Exception;
    }

    private final Map<String, Handler> posts = new ConcurrentHashMap<>();

    /** post routes POST path to h. */
    public void post(String path, Handler h) {
        posts.put(path, h);
    }

    /** mount serves every route on s. */
    public void mount(HttpServer s) {
        s.createContext("/", this::serve);
    }

    private void serve(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        try (x) {
            Handler h = posts.get(path);
            if (h == null) {
                error(x, 404, "Not Found", path);
                return;
            }
            if (!"POST".equals(x.getRequestMethod())) {
                x.getResponseHeaders().set("Allow", "POST");
                error(x, 405, "Method Not Allowed", path);
                return;
            }
            String ct = x.getRequestHeaders().getFirst("Content-Type");
            if (ct == null || !ct.toLowerCase().startsWith("application/json")) {
                error(x, 415, "Unsupported Media Type", path);
                return;
            }
            String raw = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Object body;
            try {
                body = Json.parse(raw);
            } catch (Json.JsonException e) {
                error(x, 400, "Bad Request", path);
                return;
            }
            if (!(body instanceof Map<?, ?>)) {
                error(x, 400, "Bad Request", path);
                return;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) body;
            Map<String, Object> answer;
            try {
                answer = h.handle(m);
            } catch (Exception e) {
                System.err.println(OffsetDateTime.now() + " ERROR " + x.getRequestMethod() + " " + path + ": " + e);
                e.printStackTrace();
                error(x, 500, "Internal Server Error", path);
                return;
            }
            send(x, 200, answer);
        }
    }

    private static void error(HttpExchange x, int status, String error, String path) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("timestamp", OffsetDateTime.now().toString());
        m.put("status", status);
        m.put("error", error);
        m.put("path", path);
        send(x, status, m);
    }

    private static void send(HttpExchange x, int status, Map<String, Object> m) throws IOException {
        byte[] b = Json.write(m).getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", "application/json");
        x.sendResponseHeaders(status, b.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(b);
        }
    }
}
