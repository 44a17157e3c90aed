package httpapi

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/stagedoor/stagedoor/internal/event"
)

// imageURL is where an event's image is served, versioned by its ETag so
// that a changed image is a new URL; nil when it has none.
func imageURL(e event.Event) *string {
	if e.Image.ETag == nil {
		return nil
	}
	u := "/v1/events/" + e.ID + "/image?v=" + strings.Trim(*e.Image.ETag, `"`)
	return &u
}

// putEventImage serves PUT /v1/organizer/events/{id}/image: the body is the
// image (Content-Type image/jpeg, image/png or image/webp, at most 2 MB;
// readBody let it be that large), stored re-encoded (event.ProcessImage).
func (s *Server) putEventImage(c echo.Context) error {
	mediaType, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if _, ok := event.ImageTypes[mediaType]; !ok {
		return event.ErrImageType
	}
	data, err := io.ReadAll(c.Request().Body) // in memory already, at most event.MaxImageBytes
	if err != nil {
		return err
	}
	if _, err := s.events.SetImage(c.Request().Context(), principalOf(c).AccountID, c.Param("id"), mediaType, data); err != nil {
		return err
	}
	return s.answerOwnEvent(c, http.StatusOK)
}

// deleteEventImage serves DELETE /v1/organizer/events/{id}/image: 204, the
// event has no image any more (none before is no error).
func (s *Server) deleteEventImage(c echo.Context) error {
	if err := s.events.DeleteImage(c.Request().Context(), principalOf(c).AccountID, c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// eventImage serves GET /v1/events/{id}/image (public): the image with its
// ETag; 304 when If-None-Match names it. Asked for by its versioned URL
// (?v= its ETag), it may be cached for good; otherwise it is revalidated.
func (s *Server) eventImage(c echo.Context) error {
	img, err := s.events.Image(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("ETag", img.ETag)
	if c.QueryParam("v") == strings.Trim(img.ETag, `"`) {
		h.Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		h.Set(echo.HeaderCacheControl, "public, no-cache")
	}
	if etagMatches(c.Request().Header.Get("If-None-Match"), img.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(img.Data)))
	return c.Blob(http.StatusOK, img.ContentType, img.Data)
}
