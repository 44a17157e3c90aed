package auth

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// Passwords are stored as bcrypt hashes at the configured cost
// (STAGEDOOR_BCRYPT_COST). When the cost changes, hashes stored at the old
// cost stay until their account logs in: a successful login then stores the
// password again at the current cost. Meanwhile a wrong password on an account
// stored at a lower cost is padded to the current cost, so that it takes as
// long as an unknown email's comparison with the dummy hash, and a login's
// timing does not tell which emails exist (see comparePassword).

// bcrypt's work at cost c is 2^c rounds of its key schedule; work counts it so,
// whatever the cost, and tests compare what two logins cost by it.
func bcryptWork(cost int) int64 { return int64(1) << cost }

// hashPassword hashes password at the current cost.
func (s *Service) hashPassword(password string) ([]byte, error) {
	s.hashes.Add(1)
	s.work.Add(bcryptWork(s.cost))
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return nil, fmt.Errorf("auth: hash password: %w", err)
	}
	return hash, nil
}

// comparePassword reports whether password matches hash, after work as the
// current cost's: a hash of a lower cost that does not match is followed by
// comparisons with dummy hashes of each cost from its own up to the current
// one, 2^c + 2^c + 2^(c+1) + … + 2^(cur-1) = 2^cur rounds in all. (A hash of a
// higher cost, after the cost was lowered, costs more than an unknown email
// until its account logs in again; nothing can make a comparison cheaper.)
func (s *Service) comparePassword(hash []byte, password string) bool {
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		cost = s.cost // not a bcrypt hash: the comparison fails at once; pad it whole
	}
	s.hashes.Add(1)
	s.work.Add(bcryptWork(cost))
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil {
		return true
	}
	if err != nil {
		s.compareDummy(s.cost, password)
		return false
	}
	for c := cost; c < s.cost; c++ {
		s.compareDummy(c, password)
	}
	return false
}

// compareDummy compares password with the dummy hash of cost c, as an unknown
// email is (c is the current cost) or as a comparison is padded.
func (s *Service) compareDummy(c int, password string) {
	s.hashes.Add(1)
	s.work.Add(bcryptWork(c))
	_ = bcrypt.CompareHashAndPassword(s.dummy(c), []byte(password))
}

// dummy is a hash of no password at cost c, made the first time it is needed.
func (s *Service) dummy(c int) []byte {
	d := &s.dummies[c]
	d.once.Do(func() {
		d.hash, _ = bcrypt.GenerateFromPassword([]byte("stagedoor-dummy-password"), c)
	})
	return d.hash
}

type dummyHash struct {
	once sync.Once
	hash []byte
}

// rehash stores password again at the current cost when hash, which it
// matches, is of another cost. The update names the old hash, so a password
// changed meanwhile is never overwritten.
func (s *Service) rehash(ctx context.Context, accountID string, hash []byte, password string) error {
	if cost, err := bcrypt.Cost(hash); err == nil && cost == s.cost {
		return nil
	}
	fresh, err := s.hashPassword(password)
	if err != nil {
		return err
	}
	return s.store.replacePasswordHash(ctx, accountID, hash, fresh)
}
