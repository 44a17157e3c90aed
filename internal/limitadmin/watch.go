package limitadmin

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stagedoor/stagedoor/internal/conn"
	"github.com/stagedoor/stagedoor/internal/limits"
	"github.com/stagedoor/stagedoor/internal/metrics"
	"github.com/stagedoor/stagedoor/internal/ratelimit"
)

// listenerName is the application_name of the listening connection, as seen in
// pg_stat_activity.
const listenerName = "stagedoor-limit-settings"

// refreshTimeout bounds one re-read of every setting.
const refreshTimeout = 2 * time.Second

// Run keeps the Limiter in step with the stored settings until ctx ends: it
// applies a change when its notification arrives, and re-reads every setting
// each PollInterval in case one was missed. A lost listening connection is
// opened again, after a wait that doubles from 100 ms up to 5 s. Run returns
// when ctx ends and its connection is closed.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.listen(ctx) })
	s.pollEvery(ctx)
	wg.Wait()
}

// pollEvery re-reads every setting each PollInterval. A failure is logged when it
// starts and when it ends, not at every tick.
func (s *Service) pollEvery(ctx context.Context) {
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		err := s.refresh(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.logger.Warn("limit settings: cannot re-read; keeping the settings in force", "error", err)
		case err == nil && failing:
			s.logger.Info("limit settings: re-reading again")
		}
		failing = err != nil
	}
}

// listen applies each change as its notification arrives, opening the
// listening connection again whenever it is lost; it re-reads once each time it
// starts listening, since a change may have come while nobody listened.
func (s *Service) listen(ctx context.Context) {
	refresh := func(ctx context.Context) {
		if err := s.refresh(ctx); err != nil && ctx.Err() == nil {
			s.logger.Debug("limit settings: re-read after a notification failed", "error", err)
		}
	}
	conn.Listener{
		Config:  s.listenTo,
		Channel: channel,
		Listening: func(ctx context.Context) func() {
			refresh(ctx)
			return func() {}
		},
		Notified: func(ctx context.Context, _ string) { refresh(ctx) },
		Lost: func(err error, retryIn time.Duration) {
			s.logger.Warn("limit settings: not listening for changes; re-reading meanwhile",
				"error", err, "retry_in", retryIn.String())
		},
	}.Run(ctx)
}

// refresh reads every stored setting and applies those that differ from the
// ones in force.
func (s *Service) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, err := s.store.list(ctx)
	if err != nil {
		return err
	}
	for _, st := range stored {
		s.apply(st)
	}
	return nil
}

// apply puts st in force unless it already is. s.mu is held.
func (s *Service) apply(st Stored) {
	if sw, ok := s.byName[st.Name]; ok {
		s.applySwitch(sw, st)
		return
	}
	if st.Kind != limits.Bucket {
		return // a switch of another version
	}
	inForce, known := s.limiter.Setting(st.Name)
	if !known || inForce == st.Setting {
		return // a limit of another version, or nothing new
	}
	if err := s.limiter.SetSetting(st.Name, st.Setting); err != nil {
		if s.bad[st.Name] != st.Setting {
			s.bad[st.Name] = st.Setting
			s.logger.Error("limit settings: stored setting refused; keeping the one in force",
				"limit", st.Name, "stored", st.Setting.String(), "in_force", inForce.String(), "error", err)
		}
		return
	}
	delete(s.bad, st.Name)
	s.setGauge(st.Name, st.Setting.Mode)
	s.logger.Info("limit setting applied", "limit", st.Name,
		"old", inForce.String(), "new", st.Setting.String(), "updated_by", st.UpdatedBy)
}

// applySwitch sets a switch's stored mode unless it is in force. s.mu is held.
func (s *Service) applySwitch(sw Switch, st Stored) {
	inForce := sw.Of.Mode()
	if st.Kind != storedSwitch || inForce == st.Setting.Mode {
		return
	}
	sw.Of.SetMode(st.Setting.Mode)
	s.setGauge(st.Name, st.Setting.Mode)
	s.logger.Info("limit setting applied", "limit", st.Name,
		"old", string(inForce), "new", string(st.Setting.Mode), "updated_by", st.UpdatedBy)
}

var modes = []ratelimit.Mode{ratelimit.Enforce, ratelimit.Shadow, ratelimit.Off}

// setGauge shows mode as the one in force for the limit: 1 for it, 0 for the others.
func (s *Service) setGauge(limit ratelimit.Name, mode ratelimit.Mode) {
	setModeGauge(s.gauge, limit, mode)
}

// defaultGauge is stagedoor_ratelimit_default: the mode each limit and
// switch has by this instance's environment, before any stored setting. The
// alert on a limit left out of enforce compares the mode in force with it:
// a shedder off by default is no kill switch left on.
func defaultGauge(reg prometheus.Registerer) *prometheus.GaugeVec {
	return metrics.GaugeVec(reg, "stagedoor_ratelimit_default", "The mode of each limit by this instance's environment: 1 for that mode, 0 for the others.", "limit", "mode")
}

// setModeGauge sets gauge to 1 for the limit's mode and 0 for the others.
func setModeGauge(gauge *prometheus.GaugeVec, limit ratelimit.Name, mode ratelimit.Mode) {
	for _, m := range modes {
		v := 0.0
		if m == mode {
			v = 1
		}
		gauge.WithLabelValues(string(limit), string(m)).Set(v)
	}
}

func settingGauge(reg prometheus.Registerer) *prometheus.GaugeVec {
	return metrics.GaugeVec(reg, "stagedoor_ratelimit_setting", "The mode in force of each limit on this instance: 1 for the mode in force, 0 for the others.", "limit", "mode")
}
