package config

// String returns the pattern as a regular expression.
func (p charPattern) String() string { return p.expr }
