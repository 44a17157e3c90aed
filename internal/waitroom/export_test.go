package waitroom

// Forget makes this instance forget the buyer's admission to the event, so
// that her next hold asks the room again.
func (s *Service) Forget(eventID, buyerID string) { s.admitted.forget(eventID, buyerID, false) }

// Remembered is how many admissions and refusals this instance remembers
// (ended ones not yet dropped included), at most Options.MaxAdmissions.
func (s *Service) Remembered() int { return s.admitted.len() }
