package faults

// The world rules' and the enumeration's own tests reach them by name;
// everyone else goes through World.
var (
	Renumber     = renumber
	Enumerate    = enumerate
	DefaultScope = defaultScope
)

// The world rules' tests name the rules and the error; the runner's
// tests draw schedules of a family.
type (
	WorldError = worldError
	WorldRule  = worldRule
)

const (
	RuleMatchPlace = ruleMatchPlace
	RuleOnePerKind = ruleOnePerKind
	RuleFinalFlag  = ruleFinalFlag
	RuleRounds     = ruleRounds
	RuleSeq        = ruleSeq
	RuleReturnGap  = ruleReturnGap
	RuleSent       = ruleSent
)

var Gen = genFamily
