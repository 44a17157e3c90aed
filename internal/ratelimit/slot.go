package ratelimit

import "strings"

// Redis Cluster runs a script only when all of its keys are in one hash slot. Each
// bucket key carries a hash tag, {<limit>:<identity>}, so a bucket's key is in one
// slot wherever it is used; two buckets of one request (hold-buyer and
// hold-organizer) are usually in two slots. On a cluster the limiter therefore
// groups a request's buckets by slot and runs one script a group (see Limiter.Allow
// for how all-or-nothing is kept across groups).

// slotCount is the number of hash slots of a Redis Cluster.
const slotCount = 16384

// hashSlot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag, the part between the first "{" and the next "}" when that is not empty, or
// of the whole key otherwise, modulo 16384.
func hashSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % slotCount
}

// groupBySlot splits the indexes of bs into groups whose keys share a hash slot,
// in the order each slot first appears.
func groupBySlot(bs []bucket) [][]int {
	var groups [][]int
	slots := make([]int, 0, len(bs))
	for i, b := range bs {
		s := hashSlot(b.key)
		found := false
		for g, gs := range slots {
			if gs == s {
				groups[g] = append(groups[g], i)
				found = true
				break
			}
		}
		if !found {
			slots = append(slots, s)
			groups = append(groups, []int{i})
		}
	}
	return groups
}
