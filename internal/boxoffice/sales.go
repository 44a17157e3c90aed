package boxoffice

import (
	"context"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/scan"
)

// Sales is how an event's sale stands, as its organizer's dashboard shows it.
type Sales struct {
	Currency string
	// Sections are the event's, in its order.
	Sections []SectionSales
	// Capacity, TicketsSold and TicketsHeld are the sections' sums.
	Capacity, TicketsSold, TicketsHeld int
	Orders                             checkout.OrderSales
	CheckIns                           scan.CheckIns
}

// SectionSales is one section of an event: its seats or places sold, held
// and available now, and what the sold ones cost (RevenueCents).
type SectionSales struct {
	ID, Name                        string
	GeneralAdmission                bool
	PriceCents                      int64
	Capacity, Sold, Held, Available int
	RevenueCents                    int64
}

// Sales returns how the organizer's event's sale stands: each section's seats
// sold and held (internal/hold), its orders and revenue (internal/checkout)
// and its check-ins (internal/scan), three grouped reads whatever the size
// of the event, the event itself from its snapshot (event.Service.Info).
// errkind.NotFound for an event that is not the organizer's.
func (s *Service) Sales(ctx context.Context, organizerID, eventID string) (Sales, error) {
	info, err := s.events.Info(ctx, eventID)
	if err != nil {
		return Sales{}, err
	}
	if info.OrganizerID != organizerID {
		return Sales{}, errNoEvent
	}
	bySection, err := s.seats.SalesBySection(ctx, info.ID)
	if err != nil {
		return Sales{}, err
	}
	out := Sales{Currency: info.Currency, Sections: make([]SectionSales, len(info.Sections))}
	if out.Orders, err = s.orders.Sales(ctx, info.ID); err != nil {
		return Sales{}, err
	}
	if out.CheckIns, err = s.tickets.CheckIns(ctx, info.ID); err != nil {
		return Sales{}, err
	}
	for i, sec := range info.Sections {
		got := bySection[sec.Name]
		out.Sections[i] = SectionSales{ID: sec.ID, Name: sec.Name, GeneralAdmission: sec.GeneralAdmission,
			PriceCents: sec.PriceCents, Capacity: sec.Capacity, Sold: got.Sold, Held: got.Held,
			Available: max(sec.Capacity-got.Sold-got.Held, 0), RevenueCents: got.SoldCents}
		out.Capacity += sec.Capacity
		out.TicketsSold += got.Sold
		out.TicketsHeld += got.Held
	}
	return out, nil
}
