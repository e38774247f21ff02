package local

// SetBeforeLink sets the hook an exclusive create of s calls between
// writing its temporary file and linking it into place (with the store
// path of the temporary file), for the conformance suite (package
// local_test).
func SetBeforeLink(s *Store, hook func(tmp string)) { s.beforeLink = hook }
