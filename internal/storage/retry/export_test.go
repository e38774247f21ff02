package retry

import "time"

// Waited returns the part of the retry budget spent so far.
func (s *Store) Waited() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waited
}
