package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Schema is what Open creates where it is missing, in one transaction
// under an advisory lock, one object at a time (see createSchema).
// Its tables: loot_session (with fence and settle_until), loot_member (the
// team snapshot), loot_claim (one row per session and player), loot_grant
// (keyed by the source document's grant number), loot_snapshot (the audit
// record) and loot_inventory (the Inventory's ledger, keyed by grant
// number). Times are timestamptz (UTC instants at microseconds, as
// loot.StoreTime keeps them); statuses and intents are the text of the
// loot constants; nothing has ON DELETE, because nothing is ever deleted.
//
// Run it yourself as the schema's owner, grant the application's role
// SELECT, INSERT and UPDATE on the six tables, and Open (as that role)
// only checks that they are there: no CREATE, DELETE or DROP needed.
//
// The CHECKs state what the code assumes of every row (mysql.Schema has
// the same ones), so a row corrupted or edited by hand is refused by the
// database as well as by loot.Decide and loot.Replay. CREATE TABLE IF NOT
// EXISTS leaves a table that exists as it is: a database created before a
// CHECK was added lacks it, and Open does not add it (that needs ALTER,
// which the application's role does not have). Such a database keeps
// working, defended by the code alone; its owner adds a CHECK with ALTER
// TABLE ... ADD CONSTRAINT ... CHECK (...) NOT VALID, then VALIDATE
// CONSTRAINT once the existing rows are known to pass.
const Schema = `CREATE TABLE IF NOT EXISTS loot_session (
	session_no   text        PRIMARY KEY CHECK (octet_length(session_no) BETWEEN 1 AND 64),
	dungeon_code text        NOT NULL CHECK (octet_length(dungeon_code) BETWEEN 1 AND 64),
	loot_code    text        NOT NULL CHECK (octet_length(loot_code) BETWEEN 1 AND 64),
	quantity     integer     NOT NULL CHECK (quantity >= 1),
	rule_version text        NOT NULL CHECK (octet_length(rule_version) BETWEEN 1 AND 16),
	deadline_at  timestamptz NOT NULL,
	status       text        NOT NULL CHECK (status IN ('OPEN', 'CLAIMING', 'SETTLING', 'CLOSED', 'CANCELED')),
	fence        bigint      NOT NULL CHECK (fence >= 0),
	opened_at    timestamptz NOT NULL,
	settle_until timestamptz,
	allocated    integer     NOT NULL CHECK (allocated >= 0),
	CONSTRAINT loot_session_allocated_le_quantity CHECK (allocated <= quantity),
	CONSTRAINT loot_session_settling_has_lease CHECK (status <> 'SETTLING' OR settle_until IS NOT NULL)
);
CREATE INDEX IF NOT EXISTS loot_session_claiming ON loot_session (deadline_at) WHERE status = 'CLAIMING';
CREATE INDEX IF NOT EXISTS loot_session_settling ON loot_session (settle_until) WHERE status = 'SETTLING';
CREATE TABLE IF NOT EXISTS loot_member (
	session_no text   NOT NULL REFERENCES loot_session,
	player_id  bigint NOT NULL CHECK (player_id > 0),
	PRIMARY KEY (session_no, player_id)
);
CREATE TABLE IF NOT EXISTS loot_claim (
	session_no text        NOT NULL,
	player_id  bigint      NOT NULL CHECK (player_id > 0),
	intent     text        NOT NULL CHECK (intent IN ('NEED', 'GREED', 'PASS')),
	claimed_at timestamptz NOT NULL,
	PRIMARY KEY (session_no, player_id)
);
CREATE TABLE IF NOT EXISTS loot_grant (
	grant_no    text        PRIMARY KEY CHECK (octet_length(grant_no) BETWEEN 1 AND 150),
	session_no  text        NOT NULL,
	player_id   bigint      NOT NULL CHECK (player_id > 0),
	loot_code   text        NOT NULL,
	quantity    integer     NOT NULL CHECK (quantity >= 1),
	rank        integer     NOT NULL CHECK (rank >= 1),
	status      text        NOT NULL CHECK (status IN ('PENDING', 'SUCCESS')),
	attempts    integer     NOT NULL CHECK (attempts >= 0),
	lease_until timestamptz NOT NULL,
	UNIQUE (session_no, rank)
);
CREATE INDEX IF NOT EXISTS loot_grant_pending ON loot_grant (lease_until, grant_no) WHERE status = 'PENDING';
CREATE TABLE IF NOT EXISTS loot_snapshot (
	session_no   text        PRIMARY KEY,
	fence        bigint      NOT NULL CHECK (fence >= 1),
	dungeon_code text        NOT NULL,
	loot_code    text        NOT NULL,
	quantity     integer     NOT NULL CHECK (quantity >= 1),
	deadline_at  timestamptz NOT NULL,
	rule_version text        NOT NULL,
	members      bigint[]    NOT NULL,
	claims       jsonb       NOT NULL,
	claims_hash  text        NOT NULL,
	winners      bigint[]    NOT NULL,
	recorded_at  timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS loot_inventory (
	grant_no   text        PRIMARY KEY,
	player_id  bigint      NOT NULL CHECK (player_id > 0),
	loot_code  text        NOT NULL,
	quantity   integer     NOT NULL CHECK (quantity >= 1),
	applied_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS loot_inventory_holder ON loot_inventory (player_id, loot_code);`

// Why these indexes, and what they cost:
//   - loot_session_claiming and loot_session_settling serve Overdue's two
//     halves (CLAIMING by deadline, SETTLING by lease), as the source
//     document's idx_status_deadline (status, deadline_at) does, but hold
//     only the sessions in that status: a session leaves them for good when
//     it closes, so years of CLOSED sessions cost them nothing, and the
//     CAS and the close (status changes, never HOT updates) insert into
//     one of them or none instead of both (BenchmarkLootSettle's doc).
//   - loot_grant_pending holds the PENDING grants only, in LeaseGrants'
//     order: compensation reads the few in flight, not years of SUCCESS.
//   - UNIQUE (session_no, rank) is Grants' order and refuses two grants at
//     one rank.
//   - loot_inventory_holder serves Inventory.Holding.
//
// Foreign keys: only loot_member's, to its session. A claim's membership
// is the join of the statement that writes it, a grant's the claims the
// settler replayed (loot.Decide), and the snapshot, grants and ledger
// rows are written by the statement that holds their parent row; a key
// on each would re-check that per row, and lock the parent rows, for
// nothing the statements leave open.

// columns are the columns Open expects of each table, in Schema's order
// (a table that exists with other columns is refused with ErrSchema).
var columns = map[string][]string{
	"loot_session":   {"session_no", "dungeon_code", "loot_code", "quantity", "rule_version", "deadline_at", "status", "fence", "opened_at", "settle_until", "allocated"},
	"loot_member":    {"session_no", "player_id"},
	"loot_claim":     {"session_no", "player_id", "intent", "claimed_at"},
	"loot_grant":     {"grant_no", "session_no", "player_id", "loot_code", "quantity", "rank", "status", "attempts", "lease_until"},
	"loot_snapshot":  {"session_no", "fence", "dungeon_code", "loot_code", "quantity", "deadline_at", "rule_version", "members", "claims", "claims_hash", "winners", "recorded_at"},
	"loot_inventory": {"grant_no", "player_id", "loot_code", "quantity", "applied_at"},
}

// checkColumns refuses tables that exist with other columns than Schema's
// (CREATE TABLE IF NOT EXISTS would silently accept them); missing tables
// are created after it.
func checkColumns(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT table_name, array_agg(column_name::text ORDER BY ordinal_position)
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ANY($1)
		GROUP BY table_name`, tableNames())
	if err != nil {
		return fmt.Errorf("loot/postgres: open: checking the columns: %w", err)
	}
	got := map[string][]string{}
	for rows.Next() {
		var (
			table string
			cols  []string
		)
		if err := rows.Scan(&table, &cols); err != nil {
			return fmt.Errorf("loot/postgres: open: checking the columns: %w", err)
		}
		got[table] = cols
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("loot/postgres: open: checking the columns: %w", err)
	}
	for _, table := range tableNames() {
		if want, have := columns[table], got[table]; have != nil && !slices.Equal(have, want) {
			return fmt.Errorf("%w: %s has columns (%s), want (%s)", ErrSchema, table,
				strings.Join(got[table], ", "), strings.Join(want, ", "))
		}
	}
	return nil
}

func tableNames() []string { return slices.Sorted(maps.Keys(columns)) }
