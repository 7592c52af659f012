package media

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Known reports which of the photo ids a pet still has (petstore.Store.KnownPhotos).
type Known func(ctx context.Context, ids []string) (map[string]bool, error)

// sweepBatch is how many photo ids one Known call asks about.
const sweepBatch = 500

// photoPrefix starts every photo id, and so every key of a photo's files.
const photoPrefix = "ph_"

// Sweep removes the files of photos that no pet has and that were written before
// before: those a crash left between an upload's files and its row, or between a
// deletion's commit and its removal of the files. A photo being uploaded has files and
// no row yet; before (the caller's: an hour ago) leaves those alone. It returns how
// many photos it removed. Its cost grows with the files kept, so it runs in the
// background, never for a request.
func Sweep(ctx context.Context, s Store, known Known, before time.Time) (int, error) {
	keys := map[string][]string{} // photo id → its keys, for the ids old enough
	// Only the keys of photos, ph_…/{original,display,thumb}: a bucket or a folder may
	// hold other things (backups, another deployment's files), which are none of its.
	err := s.List(ctx, photoPrefix, func(key string, modified time.Time) error {
		id, size, ok := strings.Cut(key, "/")
		if ok && petstore.ValidPhotoID(id) && petstore.PhotoSize(size).Valid() && modified.Before(before) {
			keys[id] = append(keys[id], key)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	removed := 0
	for len(ids) > 0 {
		batch := ids[:min(sweepBatch, len(ids))]
		ids = ids[len(batch):]
		have, err := known(ctx, batch)
		if err != nil {
			return removed, fmt.Errorf("sweep: %w", err)
		}
		for _, id := range batch {
			if have[id] {
				continue
			}
			if err := s.Delete(ctx, keys[id]...); err != nil {
				return removed, fmt.Errorf("sweep: %w", err)
			}
			removed++
		}
	}
	return removed, nil
}
