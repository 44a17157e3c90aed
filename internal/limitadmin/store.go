package limitadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// channel is the PostgreSQL NOTIFY channel of changed settings; the payload is
// the limit's name.
const channel = "stagedoor_limit_settings"

// fromEnvironment is updated_by of a row inserted from the environment.
const fromEnvironment = "environment"

// store is the SQL of limit settings: one row per limit in limit_settings.
type store struct {
	db *pgxpool.Pool
}

const columns = `name, rate, period_ms, burst, mode, updated_at, updated_by`

// seed inserts the setting of each definition, and the mode of each switch,
// that has no row yet; a stored setting is never overwritten.
func (s store) seed(ctx context.Context, defs []ratelimit.Definition, switches []Switch) error {
	batch := &pgx.Batch{}
	for _, d := range defs {
		queueInsert(batch, d.Name, d.Setting)
	}
	for _, sw := range switches {
		queueInsert(batch, sw.Of.Name(), switchSetting(sw.Of.Mode()))
	}
	if err := s.db.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("limitadmin: store the environment's settings: %w", err)
	}
	return nil
}

// insertSQL inserts a setting from the environment unless the name has a row;
// a switch's setting has no Limit, and its row no bucket (NULLs).
const insertSQL = `
	INSERT INTO limit_settings (name, rate, period_ms, burst, mode, updated_by)
	VALUES ($1, $2, $3, $4, $5, $6)
	ON CONFLICT (name) DO NOTHING`

func queueInsert(batch *pgx.Batch, name ratelimit.Name, st ratelimit.Setting) {
	batch.Queue(insertSQL, insertArgs(name, st)...)
}

func insertArgs(name ratelimit.Name, st ratelimit.Setting) []any {
	rate, periodMS, burst := bucketColumns(st.Limit)
	return []any{name, rate, periodMS, burst, string(st.Mode), fromEnvironment}
}

// bucketColumns are a Limit's three columns, NULL for a switch's empty Limit.
func bucketColumns(l ratelimit.Limit) (rate *int, periodMS *int64, burst *int) {
	if l == (ratelimit.Limit{}) {
		return nil, nil, nil
	}
	ms := l.Period.Milliseconds()
	return &l.Rate, &ms, &l.Burst
}

// list returns every stored setting, in no particular order.
func (s store) list(ctx context.Context) ([]Stored, error) {
	rows, err := s.db.Query(ctx, `SELECT `+columns+` FROM limit_settings`)
	if err != nil {
		return nil, fmt.Errorf("limitadmin: read settings: %w", err)
	}
	stored, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Stored, error) { return scanStored(row) })
	if err != nil {
		return nil, fmt.Errorf("limitadmin: read settings: %w", err)
	}
	return stored, nil
}

// update changes one limit's row to change(old), in one transaction that also
// sends the NOTIFY, so that no instance hears of a change that did not commit.
// A missing row is first inserted as fallback. An error of change is returned
// as it is, and nothing is written.
func (s store) update(ctx context.Context, name ratelimit.Name, fallback ratelimit.Setting,
	change func(ratelimit.Setting) (ratelimit.Setting, error), by string) (old, next Stored, err error) {
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertSQL, insertArgs(name, fallback)...); err != nil {
			return err
		}
		old, err = scanStored(tx.QueryRow(ctx, `SELECT `+columns+` FROM limit_settings WHERE name = $1 FOR UPDATE`, name))
		if err != nil {
			return err
		}
		setting, err := change(old.Setting)
		if err != nil {
			return err
		}
		rate, periodMS, burst := bucketColumns(setting.Limit)
		next, err = scanStored(tx.QueryRow(ctx, `
			UPDATE limit_settings
			SET rate = $2, period_ms = $3, burst = $4, mode = $5, updated_at = now(), updated_by = $6
			WHERE name = $1
			RETURNING `+columns,
			name, rate, periodMS, burst, string(setting.Mode), by))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, name)
		return err
	})
	if errors.Is(err, errkind.Invalid) {
		return Stored{}, Stored{}, err
	}
	if err != nil {
		return Stored{}, Stored{}, fmt.Errorf("limitadmin: update %s: %w", name, err)
	}
	return old, next, nil
}

// storedSwitch is the Kind of a row without a bucket, until List or Update
// says which kind of switch it is.
const storedSwitch Kind = "switch"

func scanStored(row pgx.Row) (Stored, error) {
	var (
		st       Stored
		rate     *int
		periodMS *int64
		burst    *int
		mode     string
	)
	if err := row.Scan(&st.Name, &rate, &periodMS, &burst, &mode, &st.UpdatedAt, &st.UpdatedBy); err != nil {
		return Stored{}, err
	}
	st.Setting.Mode = ratelimit.Mode(mode)
	st.Kind = storedSwitch
	if rate != nil && periodMS != nil && burst != nil { // all or none: a CHECK says so
		st.Kind = limits.Bucket
		st.Setting.Limit = ratelimit.Limit{Rate: *rate, Period: time.Duration(*periodMS) * time.Millisecond, Burst: *burst}
	}
	return st, nil
}
