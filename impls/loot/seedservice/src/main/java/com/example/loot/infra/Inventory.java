package com.example.loot.infra;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The inventory ("背包服务") the document's grants are delivered to; the
 * document names it but shows no client. With a URL (loot.inventory.url)
 * a delivery is one HTTP POST of
 * {"grantNo","sessionNo","playerId","lootCode","quantity"} with the grant
 * number as its Idempotency-Key header; a 2xx answer means applied,
 * anything else (another status, a timeout after timeoutMillis, a reset)
 * is a failure the caller leaves PENDING for the next compensation pass.
 * One attempt per call: the retry is the compensation job's, under the
 * same grant number. Without a URL a delivery is one JSON line on
 * standard output, always applied.
 */
public final class Inventory {
    private final URI url;
    private final Duration timeout;
    private final HttpClient client;

    /** url empty: deliveries are logged. */
    public Inventory(String url, long timeoutMillis) {
        this.url = url.isEmpty() ? null : URI.create(url);
        this.timeout = Duration.ofMillis(timeoutMillis);
        this.client = this.url == null ? null : HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    /** deliver hands one grant to the inventory; it returns once it is applied. */
    public void deliver(String grantNo, String sessionNo, long playerId, String lootCode, int quantity)
            throws IOException, InterruptedException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("grantNo", grantNo);
        body.put("sessionNo", sessionNo);
        body.put("playerId", playerId);
        body.put("lootCode", lootCode);
        body.put("quantity", quantity);
        if (url == null) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("time", OffsetDateTime.now().toString());
            line.put("msg", "deliver");
            line.putAll(body);
            System.out.println(Json.write(line));
            return;
        }
        HttpRequest req = HttpRequest.newBuilder(url)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", grantNo)
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .build();
        HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() / 100 != 2) {
            throw new IOException("inventory answered " + resp.statusCode() + " for " + grantNo + ": " + resp.body());
        }
    }
}
