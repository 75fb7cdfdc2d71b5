package postgres

import (
	"strings"

	"github.com/onceproof/onceproof/internal/pgstore"
)

// Schema is what Open creates, in one transaction under an advisory lock,
// with {T} standing for Options.Table and {G} for Options.Table+"_grants".
// A row of {T} is one claim: key is the 16 bytes of ref.Key.Bytes, state is
// ref.State (1 Granted, 2 Delivered; a row never exists in StateNew), lease
// is Claim.LeaseUntil, and payload is emptied at Delivered. The partial
// index holds only the Granted rows, which Pending reads. A row of {G} is
// one grant the Sink applied.
//
// Open creates only what is missing, so the role it connects as needs
// CREATE on the schema only if the objects do not exist yet: run Schema
// yourself as another role, grant SELECT, INSERT and UPDATE on both tables,
// and Open needs nothing more (no DELETE, no DROP). A {T} with other
// columns is refused with ErrSchema.
const Schema = `CREATE TABLE IF NOT EXISTS {T} (
	key     bytea       PRIMARY KEY CHECK (octet_length(key) = 16),
	state   smallint    NOT NULL CHECK (state IN (1, 2)),
	payload bytea       NOT NULL,
	lease   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS {T}_pending ON {T} (lease) WHERE state = 1;
CREATE TABLE IF NOT EXISTS {G} (
	key     bytea PRIMARY KEY CHECK (octet_length(key) = 16),
	payload bytea NOT NULL
);`

// Why the partial index {T}_pending, and what it costs: Pending scans only
// the Granted rows, which are few (in flight, or left by a crash) however
// many Delivered rows years of retention keep. Its price: the Commit
// Granted -> Delivered changes state, a column of the index's predicate, so
// PostgreSQL cannot make it a HOT update and the new row version gets a new
// primary-key entry (BenchmarkStore's doc has the measured cost). The
// alternatives do not pay:
//   - no index: Pending becomes a sequential scan of the whole table, every
//     Recover reading years of Delivered rows to find a handful of Granted;
//   - a plain index on (state, lease): state is in it, so it blocks HOT
//     exactly as this one does, and it also holds every Delivered row
//     (PostgreSQL 16's exemption covers only summarizing indexes such as
//     BRIN, which cannot select the few Granted rows);
//   - the same partial index on (key) instead of (lease), to spread inserts
//     over the index instead of its newest leaf: no faster (BenchmarkStore).
// And the paths that matter most skip the update anyway: a seed-form Settle
// claims with BeginDelivered (born Delivered, never in this index), and
// Apply with Store.Sink (a ref.CommittingSink) makes the sink's one UPDATE
// the only write after the claim.

// schemaSteps splits Schema into its statements for table.
func schemaSteps(table string) []pgstore.Step {
	return pgstore.Steps(strings.NewReplacer("{T}", table, "{G}", table+"_grants").Replace(Schema))
}

// queries holds every statement, with the table names substituted once at
// Open (identifiers cannot be bind parameters). The table name is validated
// by tableName, so substitution cannot inject SQL.
type queries struct {
	schema []pgstore.Step

	// begin1 claims one key in one round trip, in the state $4: Granted
	// for Begin, Delivered (with an empty payload) for BeginDelivered. When the key exists, the
	// fallback SELECT in the same statement reads it; it returns no row only
	// when a concurrent transaction inserted the key after this statement's
	// snapshot (ON CONFLICT waited for it to commit), and then beginAgain,
	// a new statement with a new snapshot, reads it.
	begin1     string
	beginAgain string
	// beginN claims many keys in one statement (each in its own state, as
	// begin1): unnest the arrays, insert
	// in array order, which the caller sorts by key (two batches locking
	// overlapping keys in the same order cannot deadlock), and return the
	// keys it inserted. The others were on
	// record already (a duplicate: rare, the Window catches most), and
	// beginAgainN, a second statement with a new snapshot, reads their
	// state. Reading them in the first statement would probe the index for
	// every key, fresh or not, to find the few that are not.
	beginN      string
	beginAgainN string

	// commit1 advances one key forward only and says whether the key
	// exists (false: ref.ErrNotFound). Payloads are cleared at Delivered:
	// nothing will read them again, and retention then costs ~60 bytes a
	// record instead of 60 + payload.
	commit1 string
	// commitN advances many keys and returns the keys it changed; the
	// others are either at or past the state already (a no-op) or unknown
	// (ref.ErrNotFound), and existsN, a second statement run only when
	// there are such keys, tells which. In the settlement stream every
	// Commit changes its row: Apply skips Commit after a Sink that commits
	// the record itself (ref.CommittingSink), so the second statement is
	// the rare path. (Before CommittingSink every Commit after Store.Sink
	// was such a no-op, and commitN probed every key in the same
	// statement instead: one more index probe per row. Back to back at
	// concurrency 64, batched: 27-28k claim+commit pairs/s with it,
	// 32-38k with the probe left out.) Every access to the table goes through
	// "key = ANY($1)", an index scan: a join with the unnested input lets
	// the planner pick a sequential scan of a table of millions of rows.
	commitN string
	existsN string

	pending string

	// The sink's statements, run in one transaction (see sink.go).
	grant         string
	markDelivered string
	grantCount    string
	grantGet      string
}

func newQueries(table string) queries {
	r := strings.NewReplacer("{T}", table, "{G}", table+"_grants")
	q := func(s string) string { return r.Replace(s) }
	return queries{
		schema: schemaSteps(table),
		begin1: q(`WITH ins AS (
				INSERT INTO {T} (key, state, payload, lease) VALUES ($1, $4, $2, $3)
				ON CONFLICT (key) DO NOTHING
				RETURNING state
			)
			SELECT state, true FROM ins
			UNION ALL
			SELECT state, false FROM {T} WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM ins)`),
		beginAgain: q(`SELECT state FROM {T} WHERE key = $1`),
		beginN: q(`WITH input AS (
				SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::timestamptz[], $4::smallint[]) AS u(key, payload, lease, state)
			)
			INSERT INTO {T} (key, state, payload, lease)
			SELECT key, state, payload, lease FROM input
			ON CONFLICT (key) DO NOTHING
			RETURNING key, state`),
		beginAgainN: q(`SELECT key, state FROM {T} WHERE key = ANY($1::bytea[])`),
		commit1: q(`WITH upd AS (
				UPDATE {T} SET state = $2, payload = CASE WHEN $2 >= 2 THEN ''::bytea ELSE payload END
				WHERE key = $1 AND state < $2
				RETURNING 1
			)
			SELECT EXISTS (SELECT 1 FROM upd) OR EXISTS (SELECT 1 FROM {T} WHERE key = $1)`),
		commitN: q(`WITH input AS (
				SELECT * FROM unnest($1::bytea[], $2::smallint[]) AS u(key, state)
			)
			UPDATE {T} t SET state = i.state, payload = CASE WHEN i.state >= 2 THEN ''::bytea ELSE t.payload END
			FROM input i WHERE t.key = ANY($1::bytea[]) AND t.key = i.key AND t.state < i.state
			RETURNING t.key`),
		existsN: q(`SELECT key FROM {T} WHERE key = ANY($1::bytea[])`),
		pending: q(`SELECT key, payload, lease FROM {T} WHERE state = 1 AND lease <= $1 ORDER BY lease LIMIT $2`),

		grant:         q(`INSERT INTO {G} (key, payload) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`),
		markDelivered: q(`UPDATE {T} SET state = 2, payload = ''::bytea WHERE key = $1 AND state < 2`),
		grantCount:    q(`SELECT count(*) FROM {G}`),
		grantGet:      q(`SELECT payload FROM {G} WHERE key = $1`),
	}
}
