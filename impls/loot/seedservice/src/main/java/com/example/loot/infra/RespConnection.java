package com.example.loot.infra;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One connection to a Redis server speaking RESP2: a command is an array
 * of bulk strings; a reply is a simple string (String), an error (thrown
 * as RedisException), an integer (Long), a bulk string (String, or null
 * for the null bulk) or an array (List). timeoutMillis bounds the connect
 * and every read (spring.data.redis.timeout).
 */
final class RespConnection implements AutoCloseable {
    /** RedisException is an error reply: the server answered and said no. */
    static final class RedisException extends IOException {
        RedisException(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RespConnection(String host, int port, int timeoutMillis) throws IOException {
        socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            socket.setTcpNoDelay(true);
            in = new BufferedInputStream(socket.getInputStream());
            out = new BufferedOutputStream(socket.getOutputStream());
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** command sends args as one command and returns its reply. */
    Object command(String... args) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String a : args) {
            byte[] v = a.getBytes(StandardCharsets.UTF_8);
            b.writeBytes(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            b.writeBytes(v);
            b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write(b.toByteArray());
        out.flush();
        return reply();
    }

    private Object reply() throws IOException {
        int kind = in.read();
        if (kind < 0) {
            throw new EOFException("redis closed the connection");
        }
        String line = line();
        switch (kind) {
            case '+':
                return line;
            case '-':
                throw new RedisException(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] v = in.readNBytes(n);
                if (v.length < n || in.read() != '\r' || in.read() != '\n') {
                    throw new EOFException("redis: short bulk reply");
                }
                return new String(v, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(reply());
                }
                return items;
            }
            default:
                throw new IOException("redis: unknown reply type " + (char) kind);
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c; (c = in.read()) != '\r'; ) {
            if (c < 0) {
                throw new EOFException("redis: reply cut short");
            }
            b.write(c);
        }
        if (in.read() != '\n') {
            throw new IOException("redis: reply line not ended by CRLF");
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Closing a socket that failed: nothing to do about it.
        }
    }
}
