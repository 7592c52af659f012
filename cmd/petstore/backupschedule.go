package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acme-pets/petstore/internal/sqlite"
)

// backupName is how a scheduled backup is named: petstore- and the UTC time of its
// start, so that names sort as times do.
const (
	backupPrefix = "petstore-"
	backupSuffix = ".db"
	backupStamp  = "20060102T150405Z"
)

// backupSchedule takes backups of the database into dir every interval, in one
// goroutine (two never overlap), and keeps the newest keep of them. The first is
// due one interval after the newest backup already in dir, at once when there is
// none: a server restarted more often than the interval still takes them.
type backupSchedule struct {
	db    *sqlite.DB
	dir   string
	every time.Duration
	keep  int
	log   *slog.Logger
	now   func() time.Time

	taken, failed prometheus.Counter
	lastSuccess   prometheus.Gauge // Unix time of the last backup that succeeded
	lastSize      prometheus.Gauge // bytes of that backup
}

func newBackupSchedule(db *sqlite.DB, dir string, every time.Duration, keep int, log *slog.Logger) (*backupSchedule, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("--backup-dir: %w", err)
	}
	return &backupSchedule{
		db: db, dir: dir, every: every, keep: keep, log: log, now: time.Now,
		taken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_backups_total", Help: "Scheduled backups taken (--backup-dir).",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "petstore_backup_failures_total", Help: "Scheduled backups that failed.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "petstore_backup_last_success_timestamp_seconds", Help: "When the last scheduled backup that succeeded started, in Unix seconds; 0 before the first.",
		}),
		lastSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "petstore_backup_last_size_bytes", Help: "Size of the last scheduled backup that succeeded.",
		}),
	}, nil
}

// collectors are the schedule's metrics, for /metrics.
func (s *backupSchedule) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.taken, s.failed, s.lastSuccess, s.lastSize}
}

// run takes the backups until ctx ends.
func (s *backupSchedule) run(ctx context.Context) {
	wait := time.Duration(0)
	if names := s.backups(); len(names) > 0 {
		if at, err := time.Parse(backupStamp, stamp(names[len(names)-1])); err == nil {
			// At most one interval: a newest backup named in the future (a clock
			// stepped back, a directory from another machine) must not stop the schedule.
			wait = min(max(at.Add(s.every).Sub(s.now()), 0), s.every)
		}
	}
	s.log.Info("scheduled backups", "dir", s.dir, "every", s.every, "keep", s.keep, "first in", wait.Round(time.Second))
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		began := s.now()
		s.take(ctx)
		// The next one is an interval after this one began: a slow backup does not
		// shift the schedule, and one longer than the interval is followed at once.
		t.Reset(max(began.Add(s.every).Sub(s.now()), 0))
	}
}

// take takes one backup and prunes the old ones.
func (s *backupSchedule) take(ctx context.Context) {
	start := s.now()
	dst := filepath.Join(s.dir, backupPrefix+start.UTC().Format(backupStamp)+backupSuffix)
	snap, err := s.db.Backup(ctx, dst, false)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		s.failed.Inc()
		s.log.Error("scheduled backup failed", "file", dst, "err", err)
		return
	}
	s.taken.Inc()
	s.lastSuccess.Set(float64(start.Unix()))
	s.lastSize.Set(float64(snap.Size))
	s.log.Info("backup taken", "file", dst, "bytes", snap.Size, "took", snap.Took.Round(time.Millisecond),
		"orders", snap.Orders, "instant", snap.At.Format(time.RFC3339Nano))
	s.prune()
}

// prune removes the backups of dir but the newest keep.
func (s *backupSchedule) prune() {
	names := s.backups()
	for _, name := range names[:max(len(names)-s.keep, 0)] {
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
			s.log.Warn("remove an old backup", "file", name, "err", err)
			continue
		}
		s.log.Info("removed an old backup", "file", name, "keep", s.keep)
	}
}

// backups lists the scheduled backups in dir, oldest first: only files named as the
// schedule names them, so that nothing else in the directory is ever removed.
func (s *backupSchedule) backups() []string {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("list the backups", "dir", s.dir, "err", err)
		return nil
	}
	var names []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), backupPrefix) || !strings.HasSuffix(e.Name(), backupSuffix) {
			continue
		}
		if _, err := time.Parse(backupStamp, stamp(e.Name())); err == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// stamp is the time part of a backup's name.
func stamp(name string) string {
	return strings.TrimSuffix(strings.TrimPrefix(name, backupPrefix), backupSuffix)
}
