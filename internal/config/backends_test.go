package config

// The tests configure destinations on every backend: link them all, as the
// command line does (backends register on import; see package registry).
import _ "github.com/distributor-dev/distributor/backend/all"
