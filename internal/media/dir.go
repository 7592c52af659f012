package media

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Dir is a Store in a directory: each key a file at the same relative path.
//
// A Put is atomic and durable: the bytes go to a temporary file in the key's own
// directory (so the rename cannot cross file systems), which is synced, renamed over
// the key, and then the directory is synced so that the rename survives a crash. A
// reader sees the old file or the new one, never half of one.
//
// A directory keeps no content type: Get sniffs it from the bytes, which are images
// package photo made (JPEG or PNG), each with an unambiguous signature.
type Dir struct {
	root string
}

// tempPrefix starts the names of Put's temporary files; no key part starts with '.'.
const tempPrefix = ".put-"

// NewDir returns the Store in the directory at path, creating it (0o755) if need be.
func NewDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("media: no directory given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return &Dir{root: abs}, nil
}

// Root is the directory the store writes in.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

// Put writes data under key atomically; contentType is not kept (see Dir).
func (d *Dir) Put(ctx context.Context, key, contentType string, data []byte) error {
	path, err := d.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	// A Delete of the last file in dir may remove dir between MkdirAll and
	// CreateTemp: make it again, a few times.
	var f *os.File
	for range 3 {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("media: put %s: %w", key, err)
		}
		if f, err = os.CreateTemp(dir, tempPrefix+"*"); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("media: put %s: %w", key, err)
	}
	if err := writeSynced(f, data); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("media: put %s: %w", key, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("media: put %s: %w", key, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("media: put %s: %w", key, err)
	}
	return nil
}

// writeSynced writes data to f, makes it world-readable (CreateTemp makes 0o600),
// syncs and closes it.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get reads the file under key.
func (d *Dir) Get(ctx context.Context, key string) (Object, error) {
	path, err := d.path(key)
	if err != nil {
		return Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, fmt.Errorf("media: get %s: %w", key, err)
	}
	return Object{Data: data, ContentType: http.DetectContentType(data)}, nil
}

// OpenLarge opens the file under key when it holds more than min bytes, for a reader
// to stream rather than read whole (FileOpener); ok is false for a smaller one, or
// none.
func (d *Dir) OpenLarge(key string, min int64) (f *os.File, ok bool, err error) {
	path, err := d.path(key)
	if err != nil {
		return nil, false, err
	}
	f, err = os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("media: open %s: %w", key, err)
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() <= min {
		f.Close()
		return nil, false, nil
	}
	return f, true, nil
}

// Delete removes the files under keys, and each one's directory when it is left
// empty (a photo's directory goes with its last size). Every key is checked first.
func (d *Dir) Delete(ctx context.Context, keys ...string) error {
	paths := make([]string, len(keys))
	for i, key := range keys {
		var err error
		if paths[i], err = d.path(key); err != nil {
			return err
		}
	}
	for i, path := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("media: delete %s: %w", keys[i], err)
		}
		// Up to the root, each parent goes if it is empty; os.Remove refuses a
		// directory that is not, which ends the climb.
		for dir := filepath.Dir(path); dir != d.root && strings.HasPrefix(dir, d.root); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	return nil
}

// List walks the directory for the keys that start with prefix. Put's temporary
// files are not keys and are left out.
func (d *Dir) List(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error {
	// Start from the deepest directory the prefix names: "abc/thu" walks abc only.
	start := d.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if CheckKey(prefix[:i]) != nil {
			return nil // no key starts with it
		}
		start = filepath.Join(d.root, filepath.FromSlash(prefix[:i]))
	}
	err := filepath.WalkDir(start, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile (a Delete), or never there
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() && path != start {
			// A folder no key under prefix can be in is not read at all: other things
			// beside the photos (lost+found, a backup folder) are none of the store's.
			if rel, err := filepath.Rel(d.root, path); err == nil {
				rel = filepath.ToSlash(rel) + "/"
				if !strings.HasPrefix(rel, prefix) && !strings.HasPrefix(prefix, rel) {
					return fs.SkipDir
				}
			}
			return nil
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(d.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(key, info.ModTime())
	})
	if err != nil {
		return fmt.Errorf("media: list %q: %w", prefix, err)
	}
	return nil
}
