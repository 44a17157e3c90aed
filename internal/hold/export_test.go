package hold

// Statuses lists every Status, for the test that the database allows exactly
// these.
var Statuses = []Status{Active, CheckingOut, Expired, Released, Converted}
