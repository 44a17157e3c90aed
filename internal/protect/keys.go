package protect

import (
	"crypto/sha256"
	"encoding/base64"
)

// Key is the Redis key <prefix><kind>:{<slot>}<suffix>, such as
// "sd:wr:{42}:q": prefix is the configuration's Redis prefix ("sd:"), kind
// the protection's ("rl", "cc", "fleet", "wr"), and the hash tag {<slot>}
// puts every key of one slot on one node of a Redis Cluster.
func Key(prefix, kind, slot, suffix string) string {
	return prefix + kind + ":{" + slot + "}" + suffix
}

// IdentityKey is the key of a protection's state for one identity:
// <prefix><kind>:{<name>:<identity>}, or <prefix><kind>:{<tag>:<identity>}:<name>
// when tag is set (HashTag), with an identity longer than MaxIdentityBytes
// replaced by its SHA-256 (BoundIdentity), so that no client, whatever it
// sends, chooses a key longer than about 100 bytes.
func IdentityKey(prefix, kind string, name Name, tag, identity string) string {
	if tag != "" {
		return prefix + kind + ":" + HashTag(tag, identity) + ":" + string(name)
	}
	return prefix + kind + ":{" + string(name) + ":" + BoundIdentity(identity) + "}"
}

// HashTag is the hash tag {<tag>:<identity>} of the keys of identity tagged
// tag, with the identity bounded (BoundIdentity): the keys of every
// protection that carry it share one slot of a Redis Cluster, so that one
// script can touch them all.
func HashTag(tag, identity string) string {
	return "{" + tag + ":" + BoundIdentity(identity) + "}"
}

// MaxIdentityBytes is the longest identity kept as it is in a key.
const MaxIdentityBytes = 64

// BoundIdentity is identity, or "sha256:" and its digest (base64url, 43
// bytes) when it is longer than MaxIdentityBytes.
func BoundIdentity(identity string) string {
	if len(identity) <= MaxIdentityBytes {
		return identity
	}
	sum := sha256.Sum256([]byte(identity))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}
