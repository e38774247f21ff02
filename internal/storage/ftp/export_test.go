package ftp

import "github.com/distributor-dev/distributor/internal/storage/probe"

// AssumeMKDUnenforced makes s act as on a server whose MKD of an existing
// directory succeeds, as if its proofs had found that (the reference
// servers all refuse it).
func AssumeMKDUnenforced(s *Store) {
	s.proofMu.Lock()
	defer s.proofMu.Unlock()
	s.proofDone = true
	s.mkdLies = &probe.UnenforcedError{Root: s.String(), Capability: probe.ExclusiveCreate, Detail: "assumed by the test"}
}
