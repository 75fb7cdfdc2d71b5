package lootprops

import (
	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// harm is one harm source 004 names, where it names it, the properties
// that catch it and the family that produces it; a harm no property
// catches has no props and says why it is not judged.
type harm struct {
	section string
	harm    string
	props   []engine.Property
	family  engine.Family
	why     string // for a harm not judged: why not
}

// harms walks source 004 from 2.2 to 8.5 (and 9's two closing incidents)
// harm by harm: the list the properties answer to. A property exists
// because a harm here needs it, and a harm here either names the
// properties that catch it (a design that does it fails one of them in
// its family) or says why the world cannot judge it. TestHarmsNameTheKit
// keeps the names in step with the code.
var harms = []harm{
	{"2.2", "a repeated claim (double click, client retry, gateway resend) makes a second valid claim of one player", []engine.Property{lootfaults.Properties.NoDupGrant, lootfaults.Properties.RuleOrder}, lootfaults.Families.DuplicateClaim, ""},
	{"2.2", "a repeated claim is thrown back at the player as an error instead of being taken as already there", []engine.Property{lootfaults.Properties.HonestAnswer}, lootfaults.Families.DuplicateClaim, ""},
	{"2.2", "a repeated open or start (a gateway resend) writes a second session under one number: one drop becomes two sessions, which two settles can allocate twice", []engine.Property{lootfaults.Properties.ForwardOnly}, lootfaults.Families.DuplicateClaim, ""},
	{"2.2", "two settlers read the same claims and each grants a result: double grant", []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant}, lootfaults.Families.ConcurrentSettle, ""},
	{"2.2", "a settle run again delivers again: a grant without an idempotency key", []engine.Property{lootfaults.Properties.NoDupGrant}, lootfaults.Families.Crash, ""},
	{"2.3", "a status goes back (SETTLING to CLAIMING, CLOSED to anything) or skips the table", []engine.Property{lootfaults.Properties.ForwardOnly}, lootfaults.Families.LockExpiry, ""},
	{"2.3", "a claim inserted while the session settles: the claim set did not freeze at the lock, the result cannot be reproduced", []engine.Property{lootfaults.Properties.FrozenClaims, lootfaults.Properties.Replayable}, lootfaults.Families.LateClaim, ""},
	{"3.1", "the settle outlives its lock's expiry and a second executor takes the lock and settles too", []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant, lootfaults.Properties.ForwardOnly}, lootfaults.Families.LockExpiry, ""},
	{"3.1", "a row lock held across remote calls exhausts the connection pool", nil, "", "not judged: a cost, not a wrong result; the world has no pool to exhaust"},
	{"4.1", "more items granted than dropped, or fewer winners served than items and claimants allow", []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.RuleOrder}, lootfaults.Families.Quantity, ""},
	{"4.1", "one session per item: many small sessions and their lock contention", nil, "", "not judged: a shape of design, not a harm to a player; a session of several items is judged as one"},
	{"4.1", "deadlines written in different time zones: one server says past, another not yet", []engine.Property{lootfaults.Properties.OnTime, lootfaults.Properties.InWindow, lootfaults.Properties.HonestAnswer}, lootfaults.Families.ClockSkew, ""},
	{"4.2", "a claim on a session that is not CLAIMING is recorded", []engine.Property{lootfaults.Properties.FrozenClaims}, lootfaults.Families.LateClaim, ""},
	{"4.2", "a claim accepted at or after the deadline (by the database's clock) is recorded and can win", []engine.Property{lootfaults.Properties.InWindow}, lootfaults.Families.LateClaim, ""},
	{"4.2", "a player outside the team claims (越权), or one judged against the live team instead of its snapshot", []engine.Property{lootfaults.Properties.MembersOnly, lootfaults.Properties.NoOverGrant}, lootfaults.Families.Outsider, ""},
	{"4.3", "select-then-update: two settlers both pass the status check and both settle", []engine.Property{lootfaults.Properties.ForwardOnly, lootfaults.Properties.NoOverGrant}, lootfaults.Families.ConcurrentSettle, ""},
	{"4.4", "a ranking with randomness or an unbroken tie: the result cannot be explained or recomputed", []engine.Property{lootfaults.Properties.RuleOrder, lootfaults.Properties.Replayable}, lootfaults.Families.Ties, ""},
	{"4.4", "the rule's levels left out or reordered (priority, fewest wins, earliest claim): a player monopolises or the result is arbitrary", []engine.Property{lootfaults.Properties.RuleOrder}, lootfaults.Families.Clean, ""},
	{"4.5", "the grant row is written but the inventory call fails, and nothing delivers it later: lost grant", []engine.Property{lootfaults.Properties.NoLostGrant}, lootfaults.Families.StoreError, ""},
	{"4.5", "compensation delivers a grant again instead of deduplicating by its key", []engine.Property{lootfaults.Properties.NoDupGrant, lootfaults.Properties.NoOverGrant}, lootfaults.Families.CompensationRace, ""},
	{"4.6", "no snapshot of the claims, the grants and the rule version: a result that cannot be replayed or explained", []engine.Property{lootfaults.Properties.Replayable}, lootfaults.Families.Crash, ""},
	{"4.6", "a failed result notification blocks or undoes the settle", nil, "", "not judged: notification is outside the world (the source says the result stands in the database); a settle that blocks on it is Responsive's only if it never returns"},
	{"5.3", "a settle triggered before the deadline (maliciously, or by a scheduler early) locks the session and skips the claim window", []engine.Property{lootfaults.Properties.OnTime}, lootfaults.Families.EarlySettle, ""},
	{"5.4", "a settler whose lock expired deletes the lock a second settler took (release without the token)", []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant, lootfaults.Properties.ForwardOnly}, lootfaults.Families.LockExpiry, "the release itself is not judged: 5.4 makes the lock an optimisation behind the conditional update, so the harm is the third settle it lets in, judged by these"},
	{"5.4", "compensation and the settle both close the session and one overwrites the other's result", []engine.Property{lootfaults.Properties.Replayable, lootfaults.Properties.ForwardOnly}, lootfaults.Families.CompensationRace, ""},
	{"5.5", "a claim written before it is judged (or judged in one statement and written in another) lands where the rules said no", []engine.Property{lootfaults.Properties.InWindow, lootfaults.Properties.FrozenClaims, lootfaults.Properties.MembersOnly}, lootfaults.Families.LateClaim, ""},
	{"5.5", "a settle triggered by a client, a cancel around the settle: a canceled session still delivers", []engine.Property{lootfaults.Properties.NoOverGrant}, lootfaults.Families.CancelRace, ""},
	{"6.1", "a reply says accepted (or settled) while the database says otherwise", []engine.Property{lootfaults.Properties.HonestAnswer}, lootfaults.Families.Clean, ""},
	{"6.3", "a drop of one has two grant rows, or none once the deadline passed", []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoLostGrant}, lootfaults.Families.ConcurrentSettle, ""},
	{"7", "a session stuck in SETTLING after a remote call timed out once its local transaction committed", []engine.Property{lootfaults.Properties.NoLostGrant}, lootfaults.Families.TimeoutSuccess, ""},
	{"8.1", "a UUID (or an auto-increment id) as the grant's idempotency key: a retry is a new grant", []engine.Property{lootfaults.Properties.NoDupGrant, lootfaults.Properties.NoOverGrant}, lootfaults.Families.Crash, ""},
	{"8.2", "remote calls inside the settle's transaction: lock waits, exhausted connections", nil, "", "not judged: a cost; the short allocated-but-not-delivered state the source accepts instead is judged after the drain by NoLostGrant"},
	{"8.3", "a fairness score that starts at 0 lets new players win forever", nil, "", "not judged: a policy of the fairness field; the rule ranks whatever wins the server reports, and RuleOrder judges that ranking"},
	{"8.4", "no monitoring of settle success, latency and the PENDING backlog; a release to every drop at once", nil, "", "not judged: operations, outside any one run"},
	{"8.5", "the settle endpoint callable by a client: an early settle that skips the claim window", []engine.Property{lootfaults.Properties.OnTime}, lootfaults.Families.EarlySettle, ""},
	{"8.5", "a playerId trusted from the request body; DELETE rights on the audit rows", nil, "", "not judged: authentication and grants are outside the world, whose requests name their player and never delete"},
	{"9", "a settle killed midway, or an inventory call that timed out after it succeeded: the commonest source of double grants", []engine.Property{lootfaults.Properties.NoDupGrant, lootfaults.Properties.NoLostGrant}, lootfaults.Families.Crash, ""},
	{"-", "a design's call never returns (a panic, a deadlock): every harm above waits on it", []engine.Property{lootfaults.Properties.Responsive}, lootfaults.Families.Crash, "not a harm the source names: the world's own condition for judging anything"},
}
