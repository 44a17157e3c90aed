package event

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // registers WebP with image.Decode

	"github.com/stagedoor/stagedoor/internal/errkind"
	"github.com/stagedoor/stagedoor/internal/ids"
)

// An event's image: uploaded by its organizer as JPEG, PNG or WebP, decoded
// and re-encoded here (which drops every metadata segment: EXIF, GPS,
// comments), scaled down to MaxImageWidth, and stored in event_images.
const (
	// MaxImageBytes is the largest image upload.
	MaxImageBytes = 2 << 20
	// MaxImageWidth is the widest image kept: wider ones are scaled down.
	MaxImageWidth = 1600
	// maxImageSide and maxImagePixels bound what is decoded at all, from the
	// header alone, before any pixel is: a small file may claim a huge image
	// (a decompression bomb).
	maxImageSide   = 10000
	maxImagePixels = 40_000_000
	jpegQuality    = 85
)

// ImageTypes are the content types an upload may have.
var ImageTypes = map[string]string{"image/jpeg": "jpeg", "image/png": "png", "image/webp": "webp"}

// ErrImageTooLarge: the upload is over MaxImageBytes (HTTP 413).
var ErrImageTooLarge = errors.New("the image is larger than 2 MB")

// ErrImageType: the upload is not JPEG, PNG or WebP (HTTP 415).
var ErrImageType = errors.New("an event's image must be image/jpeg, image/png or image/webp")

// ImageRef names an event's image without its bytes, as its answers show it.
type ImageRef struct {
	ETag          *string // nil: no image
	Width, Height int
}

// Image is an event's stored image.
type Image struct {
	ContentType   string // image/jpeg or image/png
	Data          []byte
	Width, Height int
	ETag          string // a hash of Data, quoted as HTTP sends it
	UpdatedAt     time.Time
}

// ProcessImage checks and re-encodes an upload of contentType (which its
// bytes must match): PNG stays PNG (it may be transparent), JPEG and WebP
// become JPEG; wider than MaxImageWidth, it is scaled down.
func ProcessImage(contentType string, data []byte) (Image, error) {
	want, ok := ImageTypes[contentType]
	if !ok {
		return Image{}, ErrImageType
	}
	if len(data) > MaxImageBytes {
		return Image{}, ErrImageTooLarge
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, errkind.Invalidf("the body is not a %s image that can be read", want)
	}
	if format != want {
		return Image{}, errkind.Invalidf("the body is a %s image, not the %s its Content-Type says", format, want)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide ||
		cfg.Width*cfg.Height > maxImagePixels {
		return Image{}, errkind.Invalidf("the image is %d×%d pixels: at most %d on a side and %d million pixels are accepted",
			cfg.Width, cfg.Height, maxImageSide, maxImagePixels/1_000_000)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, errkind.Invalidf("the %s image is damaged: %v", want, err)
	}
	src = scaleDown(src)
	var out bytes.Buffer
	img := Image{ContentType: "image/jpeg", Width: src.Bounds().Dx(), Height: src.Bounds().Dy()}
	if format == "png" {
		img.ContentType = "image/png"
		err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, src)
	} else {
		err = jpeg.Encode(&out, src, &jpeg.Options{Quality: jpegQuality})
	}
	if err != nil {
		return Image{}, fmt.Errorf("event: encode the image: %w", err)
	}
	img.Data = out.Bytes()
	sum := sha256.Sum256(img.Data)
	img.ETag = `"` + hex.EncodeToString(sum[:12]) + `"`
	return img, nil
}

// scaleDown returns src, or src scaled to MaxImageWidth wide when it is wider.
func scaleDown(src image.Image) image.Image {
	b := src.Bounds()
	if b.Dx() <= MaxImageWidth {
		return src
	}
	h := max(1, b.Dy()*MaxImageWidth/b.Dx())
	dst := image.NewRGBA(image.Rect(0, 0, MaxImageWidth, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst
}

// SetImage processes the upload and stores it as the event's image, replacing
// any; an event of another organizer (or none) is errkind.NotFound.
func (s *Service) SetImage(ctx context.Context, organizerID, eventID, contentType string, data []byte) (Image, error) {
	if _, err := s.Own(ctx, organizerID, eventID); err != nil {
		return Image{}, err
	}
	img, err := ProcessImage(contentType, data)
	if err != nil {
		return Image{}, err
	}
	err = s.store.db.QueryRow(ctx, `
		INSERT INTO event_images (event_id, content_type, data, width, height, etag)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (event_id) DO UPDATE SET content_type = excluded.content_type, data = excluded.data,
			width = excluded.width, height = excluded.height, etag = excluded.etag, updated_at = now()
		RETURNING updated_at`, eventID, img.ContentType, img.Data, img.Width, img.Height, img.ETag).Scan(&img.UpdatedAt)
	if err != nil {
		return Image{}, fmt.Errorf("event: store the image: %w", err)
	}
	img.UpdatedAt = img.UpdatedAt.UTC()
	return img, nil
}

// DeleteImage removes the event's image; an event of another organizer (or
// none) is errkind.NotFound, one without an image is not an error.
func (s *Service) DeleteImage(ctx context.Context, organizerID, eventID string) error {
	if _, err := s.Own(ctx, organizerID, eventID); err != nil {
		return err
	}
	if _, err := s.store.db.Exec(ctx, `DELETE FROM event_images WHERE event_id = $1`, eventID); err != nil {
		return fmt.Errorf("event: delete the image: %w", err)
	}
	return nil
}

// Image returns the event's image; errkind.NotFound when it has none.
func (s *Service) Image(ctx context.Context, eventID string) (Image, error) {
	eventID, ok := ids.Parse(eventID)
	if !ok {
		return Image{}, errNotFound
	}
	var img Image
	err := s.store.db.QueryRow(ctx, `
		SELECT content_type, data, width, height, etag, updated_at FROM event_images WHERE event_id = $1`, eventID).
		Scan(&img.ContentType, &img.Data, &img.Width, &img.Height, &img.ETag, &img.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Image{}, errkind.NotFoundf("this event has no image")
	}
	if err != nil {
		return Image{}, fmt.Errorf("event: read the image: %w", err)
	}
	img.UpdatedAt = img.UpdatedAt.UTC()
	return img, nil
}
