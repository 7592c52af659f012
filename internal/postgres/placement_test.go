package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestWhichFailuresLeaveABatchsOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		unknown bool
	}{
		{"a write the server refused", &pgconn.PgError{Code: "23503"}, false},
		{"a key another transaction recorded first", fmt.Errorf("%w: %w", errKeyTaken, &pgconn.PgError{Code: uniqueViolation}), false},
		{"a COMMIT answered with ROLLBACK", errRolledBack, false},
		{"the server shutting down", &pgconn.PgError{Code: "57P01"}, false},
		{"a connection lost while reading the answer", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"the budget running out", context.DeadlineExceeded, true},
		{"anything else from the connection", errors.New("conn closed"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomeUnknown(tt.err); got != tt.unknown {
				t.Errorf("outcomeUnknown(%v) = %v, want %v", tt.err, got, tt.unknown)
			}
		})
	}
}
