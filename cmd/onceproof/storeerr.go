package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/onceproof/onceproof/ref/redis"
)

// storeError is a store failure as one line, its root cause first (the
// server refused the password, nothing listens there, the user lacks a
// privilege, the server speaks another protocol), then, with verbose, the
// driver's whole chain on the lines after it. Secrets are masked.
func storeError(err error, sp storeSpec, verbose bool) string {
	line := rootCause(err)
	if verbose {
		line += "\n" + sp.scrub(err.Error())
	} else {
		line += " (-v shows the driver's whole error)"
	}
	return sp.scrub(line)
}

// rootCause names the first cause a user can act on. Drivers wrap it in
// layers (pgx adds the TLS attempt it made before the plain one, and one
// line per address a host name resolved to), so the cause is looked up by
// type, not read from the text's start.
func rootCause(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "28P01", "28000":
			return "authentication failed: " + pg.Message
		case "3D000":
			return "no such database: " + pg.Message
		case "42501":
			return "permission denied: " + pg.Message + " (the user needs CREATE and DROP on the schema: each run creates and drops its own table; with -subject loot, CREATE on the database: each parallel run gets its own schema)"
		case "53300":
			return "the server has no connection to spare: " + pg.Message
		}
		return fmt.Sprintf("server error: %s (SQLSTATE %s)", pg.Message, pg.Code)
	}
	var my *gomysql.MySQLError
	if errors.As(err, &my) {
		// The server's error numbers: 1045 ER_ACCESS_DENIED_ERROR (password),
		// 1049 ER_BAD_DB_ERROR, 1044 ER_DBACCESS_DENIED_ERROR, 1142
		// ER_TABLEACCESS_DENIED_ERROR, 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR,
		// 1040 ER_CON_COUNT_ERROR.
		switch my.Number {
		case 1045:
			return "authentication failed: " + my.Message
		case 1049:
			return "no such database: " + my.Message
		case 1044, 1142, 1227:
			return "permission denied: " + my.Message + " (the account needs CREATE and DROP: each parallel run gets its own database)"
		case 1040:
			return "the server has no connection to spare: " + my.Message
		}
		return fmt.Sprintf("server error: %s (MySQL error %d)", my.Message, my.Number)
	}
	msg := err.Error()
	var dns *net.DNSError
	switch {
	case errors.Is(err, redis.ErrNotDurable):
		return "the Redis server does not persist every write before answering (it needs appendonly yes and appendfsync always): " + lastLine(msg) + "; -allow-weak-durability runs anyway"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens at that host and port"
	case errors.As(err, &dns):
		return "cannot resolve host " + dns.Name
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid password"):
		return "authentication failed: " + lastLine(msg)
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EROFS):
		return "permission denied: " + lastLine(msg)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "wrong protocol: the server hung up on the driver's first message (is it a server of this kind? PostgreSQL closes a connection that opens with a Redis command)"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "no answer in time: the server accepted the connection but never answered (is it a server of this kind? a Redis port given a postgres:// URL waits forever)"
	case strings.Contains(msg, "unexpected") || strings.Contains(msg, "invalid") && strings.Contains(msg, "reply"):
		return "wrong protocol: the server answered in a protocol the driver does not speak (is it a server of this kind?): " + lastLine(msg)
	}
	return lastLine(msg)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lastLine is the innermost part of a wrapped message: after the last ": "
// of its last line.
func lastLine(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	last := lines[len(lines)-1]
	if i := strings.LastIndex(last, ": "); i >= 0 && i+2 < len(last) {
		return last[i+2:]
	}
	return last
}
