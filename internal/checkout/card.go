package checkout

// looksLikeCardNumber reports whether token could be a payment card's number
// (a PAN) rather than a token for one: 13 to 19 digits, with spaces or dashes
// allowed between them, whose Luhn checksum holds. A checkout refuses such a
// token before anything is written or charged, so a card number never
// reaches Payrail, a log, or the hash of a request body.
func looksLikeCardNumber(token string) bool {
	digits, sum := 0, 0
	for i := len(token) - 1; i >= 0; i-- {
		c := token[i]
		switch {
		case c == ' ' || c == '-':
			continue
		case c < '0' || c > '9':
			return false
		}
		d := int(c - '0')
		if digits%2 == 1 { // every second digit from the right, doubled
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		digits++
	}
	return digits >= 13 && digits <= 19 && sum%10 == 0
}
