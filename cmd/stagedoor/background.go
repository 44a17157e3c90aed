package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/stagedoor/stagedoor/internal/checkout"
	"github.com/stagedoor/stagedoor/internal/hold"
)

// The background work of an instance, stopped after its last request.

// startHoldSweeper marks expired holds expired every hold.DefaultSweepEvery
// until the returned stop is called; stop waits for a sweep in progress.
func startHoldSweeper(ctx context.Context, holds *hold.Service, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		holds.RunSweeper(ctx, hold.DefaultSweepEvery, logger)
	}()
	return func() {
		cancel()
		<-done
	}
}

// startRecovery settles orders left pending by a crash, at start and then every
// 15 seconds (one instance at a time), until the returned stop is called.
func startRecovery(ctx context.Context, orders *checkout.Service, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		orders.RunRecovery(ctx, 15*time.Second)
	}()
	return func() {
		cancel()
		<-done
	}
}
