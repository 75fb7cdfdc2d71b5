package lootfaults

// The world rules' tests name the rules and the error; everyone else goes
// through World.
type (
	WorldError = worldError
	WorldRule  = worldRule
)

const (
	RuleAnnounced = ruleAnnounced
	RuleSent      = ruleSent
	RuleTrigger   = ruleTrigger
	RuleSeconds   = ruleSeconds
	RuleOutsiders = ruleOutsiders
	RuleCancels   = ruleCancels
	RuleClocks    = ruleClocks
	RulePauses    = rulePauses
	RuleIntents   = ruleIntents
	RuleLoot      = ruleLoot
	RuleTeam      = ruleTeam
	RuleFairness  = ruleFairness
)
