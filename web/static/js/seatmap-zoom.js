// The seat map's geometry, zoom and pan. The map is laid out at its natural
// size (seats of SEAT px, so 44 px touch targets at scale 1) and drawn through
// one CSS transform, translate(x, y) scale(s), inside a box that clips it. At
// first sight s fits the map's width to the box (the "fit" scale); + and −,
// a pinch, Ctrl+wheel (a trackpad's pinch) and the + / − keys zoom between fit
// and MAX_SCALE; a drag pans when zoomed. The numbers are pure functions
// (tested in web/test/seatmap.test.js); ZoomView wires them to the page.

/**
 * The map's measures at scale 1, in CSS px: app.css's .seatmap uses the same
 * (its custom properties --seat, --gap, … are set from these).
 */
export const GEOMETRY = Object.freeze({
  seat: 44, // a seat's width and height
  gap: 6, // between seats and rows
  label: 32, // a row letter's width
  pad: 12, // around the map
  header: 32, // a section's name line
  sectionGap: 12, // between sections
  stage: 40, // the stage marker's height (and the gap under it: pad)
});

/** The largest zoom: seats of SEAT × MAX_SCALE px. */
export const MAX_SCALE = 1.5;
/** How much one press of + or − zooms. */
export const ZOOM_STEP = 1.75;

/**
 * The natural size of a map whose sections have these numbers of rows and
 * most seats in a row ([{rows, seats}], in map order).
 * @param {{rows: number, seats: number}[]} sections
 * @param {typeof GEOMETRY} [g]
 * @returns {{width: number, height: number}}
 */
export function mapSize(sections, g = GEOMETRY) {
  const widest = Math.max(0, ...sections.map((s) => s.seats));
  const pitch = g.seat + g.gap;
  const width = 2 * g.pad + g.label + widest * pitch;
  let height = 2 * g.pad + g.stage + g.pad;
  sections.forEach((s, i) => { height += (i > 0 ? g.sectionGap : 0) + g.header + s.rows * pitch; });
  return { width, height };
}

/**
 * The scale at which the map's width fits the box's: never above 1 (a
 * small map is not blown up at first sight).
 * @param {number} contentWidth the map's natural width
 * @param {number} boxWidth
 * @returns {number}
 */
export function fitScale(contentWidth, boxWidth) {
  if (!(contentWidth > 0) || !(boxWidth > 0)) return 1;
  return Math.min(1, boxWidth / contentWidth);
}

/**
 * A scale kept between the fit and the largest zoom (the fit when it is
 * larger than MAX_SCALE's).
 * @param {number} scale
 * @param {number} fit
 * @param {number} [most]
 * @returns {number}
 */
export function clampScale(scale, fit, most = MAX_SCALE) {
  return Math.min(Math.max(scale, fit), Math.max(fit, most));
}

/**
 * An offset along one axis kept so that the map covers the box (no empty
 * margin beside a map larger than the box) or, smaller than the box, centred.
 * @param {number} offset the map's left (or top) edge in the box
 * @param {number} size the map's drawn size (natural × scale)
 * @param {number} box the box's size
 * @returns {number}
 */
export function clampPan(offset, size, box) {
  if (size <= box) return (box - size) / 2;
  return Math.min(0, Math.max(box - size, offset));
}

/**
 * @typedef {{scale: number, x: number, y: number}} View
 */

/**
 * The view zoomed to scale around the box's point (px, py): what is under the
 * point stays under it (a pinch's middle, a wheel's pointer, the box's centre).
 * @param {View} view
 * @param {number} scale the new scale (already clamped)
 * @param {number} px
 * @param {number} py
 * @returns {View}
 */
export function zoomAt(view, scale, px, py) {
  const k = scale / view.scale;
  return { scale, x: px - (px - view.x) * k, y: py - (py - view.y) * k };
}

/**
 * Zoom and pan of one element (the map) inside a clipping box. The box's
 * height follows the map's fitted size (aspect-ratio), so the page does not
 * move when the map arrives or when zooming.
 */
export class ZoomView {
  /**
   * @param {HTMLElement} box the clipping box (pointer and touch events are read here)
   * @param {HTMLElement} content the map, transformed
   * @param {() => void} [onChange] after every change of the view
   */
  constructor(box, content, onChange = () => {}) {
    this.box = box;
    this.content = content;
    this.onChange = onChange;
    this.width = 0; // the content's natural size
    this.height = 0;
    this.fit = 1;
    /** @type {View} */
    this.view = { scale: 1, x: 0, y: 0 };
    this.moved = false; // the current gesture moved (its click is not a tap on a seat)
    this.quietUntil = 0; // clicks until then end a drag or a pinch (performance.now())
    /** @type {{x: number, y: number, view: View, distance: number, mid: {x: number, y: number}} | null} */
    this.gesture = null;

    new ResizeObserver(() => this.refit()).observe(box);
    box.addEventListener("touchstart", (e) => this.onTouch(e), { passive: false });
    box.addEventListener("touchmove", (e) => this.onTouch(e), { passive: false });
    box.addEventListener("touchend", (e) => this.onTouch(e));
    box.addEventListener("touchcancel", (e) => this.onTouch(e));
    box.addEventListener("pointerdown", (e) => this.onPointer(e));
    box.addEventListener("pointermove", (e) => this.onPointer(e));
    box.addEventListener("pointerup", (e) => this.onPointer(e));
    box.addEventListener("pointercancel", (e) => this.onPointer(e));
    box.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    // A click that ends a drag or a pinch is not a choice of the seat under it.
    box.addEventListener("click", (e) => {
      if (performance.now() < this.quietUntil) {
        e.stopPropagation();
        e.preventDefault();
      }
    }, true);
  }

  /**
   * Sets the content's natural size, and reserves the box's shape for it.
   * @param {{width: number, height: number}} size
   */
  setSize({ width, height }) {
    this.width = width;
    this.height = height;
    this.content.style.width = `${width}px`;
    this.content.style.height = `${height}px`;
    this.box.style.aspectRatio = `${width} / ${height}`;
    this.box.style.maxWidth = `${width}px`;
    this.refit(true);
  }

  /** Whether the view is zoomed in beyond the fit. */
  zoomed() {
    return this.view.scale > this.fit + 1e-3;
  }

  /**
   * Reads the box's width again: at the fit, the view stays at the (new) fit.
   * @param {boolean} [reset] back to the fit whatever the zoom
   */
  refit(reset = false) {
    const boxWidth = this.box.clientWidth;
    if (!boxWidth || !this.width) return;
    const wasFit = !this.zoomed();
    this.fit = fitScale(this.width, boxWidth);
    if (reset || wasFit) this.set({ scale: this.fit, x: 0, y: 0 });
    else this.set(this.view);
  }

  /**
   * Zooms by a factor around the box's point (its centre by default).
   * @param {number} factor
   * @param {number} [px]
   * @param {number} [py]
   */
  zoomBy(factor, px = this.box.clientWidth / 2, py = this.box.clientHeight / 2) {
    const scale = clampScale(this.view.scale * factor, this.fit);
    this.set(zoomAt(this.view, scale, px, py));
  }

  /** Back to the whole map. */
  reset() {
    this.set({ scale: this.fit, x: 0, y: 0 });
  }

  /**
   * Pans so that the element (a seat inside the content) is in the box.
   * @param {HTMLElement} el
   */
  reveal(el) {
    if (!this.zoomed()) return;
    const { scale } = this.view;
    let left = 0;
    let top = 0;
    for (let e = /** @type {HTMLElement | null} */ (el); e && e !== this.content; e = /** @type {HTMLElement | null} */ (e.offsetParent)) {
      left += e.offsetLeft;
      top += e.offsetTop;
    }
    const margin = 8;
    const boxW = this.box.clientWidth;
    const boxH = this.box.clientHeight;
    let { x, y } = this.view;
    const sx = x + left * scale;
    const sy = y + top * scale;
    const w = el.offsetWidth * scale;
    const hgt = el.offsetHeight * scale;
    if (sx < margin + GEOMETRY.label * scale) x += margin + GEOMETRY.label * scale - sx;
    else if (sx + w > boxW - margin) x -= sx + w - (boxW - margin);
    if (sy < margin) y += margin - sy;
    else if (sy + hgt > boxH - margin) y -= sy + hgt - (boxH - margin);
    this.set({ scale, x, y });
  }

  /**
   * Applies a view (clamped) to the content.
   * @param {View} view
   */
  set(view) {
    const scale = clampScale(view.scale, this.fit);
    const x = clampPan(view.x, this.width * scale, this.box.clientWidth);
    const y = clampPan(view.y, this.height * scale, this.box.clientHeight);
    this.view = { scale, x, y };
    this.content.style.transform = `translate(${x}px, ${y}px) scale(${scale})`;
    this.box.classList.toggle("zoomed", this.zoomed());
    this.onChange();
  }

  /**
   * The box's point of a client (viewport) point.
   * @param {number} clientX
   * @param {number} clientY
   */
  local(clientX, clientY) {
    const r = this.box.getBoundingClientRect();
    return { x: clientX - r.left, y: clientY - r.top };
  }

  /**
   * One finger pans (when zoomed: at the fit it scrolls the page), two pinch.
   * @param {TouchEvent} e
   */
  onTouch(e) {
    const touches = [...e.touches];
    if (e.type === "touchend" || e.type === "touchcancel" || touches.length === 0) {
      this.gesture = touches.length > 0 ? this.start(touches) : null;
      this.ended();
      return;
    }
    if (e.type === "touchstart") {
      this.moved = false;
      this.gesture = this.start(touches);
      return;
    }
    const g = this.gesture;
    if (!g) return;
    const now = this.start(touches);
    if (touches.length >= 2 && g.distance > 0) {
      if (e.cancelable) e.preventDefault();
      this.moved = true;
      const scale = clampScale(g.view.scale * (now.distance / g.distance), this.fit);
      const zoomed = zoomAt(g.view, scale, g.mid.x, g.mid.y);
      this.set({ scale, x: zoomed.x + now.mid.x - g.mid.x, y: zoomed.y + now.mid.y - g.mid.y });
    } else if (touches.length === 1 && this.zoomed()) {
      const dx = now.x - g.x;
      const dy = now.y - g.y;
      if (Math.hypot(dx, dy) > 6) this.moved = true;
      if (e.cancelable) e.preventDefault();
      this.set({ scale: g.view.scale, x: g.view.x + dx, y: g.view.y + dy });
    }
  }

  /**
   * Where a touch gesture starts: its first finger, the fingers' distance and middle.
   * @param {Touch[]} touches
   */
  start(touches) {
    const points = touches.slice(0, 2).map((t) => this.local(t.clientX, t.clientY));
    const [a, b = a] = points;
    return {
      x: a.x, y: a.y, view: { ...this.view },
      distance: Math.hypot(b.x - a.x, b.y - a.y),
      mid: { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 },
    };
  }

  /**
   * A mouse or pen drags the map when zoomed (touch goes through onTouch).
   * @param {PointerEvent} e
   */
  onPointer(e) {
    if (e.pointerType === "touch") return;
    const p = this.local(e.clientX, e.clientY);
    if (e.type === "pointerdown") {
      this.moved = false;
      this.gesture = this.zoomed() && e.button === 0 ? { x: p.x, y: p.y, view: { ...this.view }, distance: 0, mid: p } : null;
    } else if (e.type === "pointermove" && this.gesture) {
      const dx = p.x - this.gesture.x;
      const dy = p.y - this.gesture.y;
      if (!this.moved && Math.hypot(dx, dy) < 6) return;
      if (!this.moved) this.box.setPointerCapture(e.pointerId);
      this.moved = true;
      this.set({ scale: this.gesture.view.scale, x: this.gesture.view.x + dx, y: this.gesture.view.y + dy });
    } else if (e.type === "pointerup" || e.type === "pointercancel") {
      this.gesture = null;
      this.ended();
    }
  }

  /** A gesture ended: if it moved, the click that may follow is not a tap. */
  ended() {
    if (this.moved) this.quietUntil = performance.now() + 400;
    this.moved = false;
  }

  /**
   * Ctrl+wheel (and a trackpad's pinch, which Chromium sends as one) zooms.
   * @param {WheelEvent} e
   */
  onWheel(e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    const p = this.local(e.clientX, e.clientY);
    this.zoomBy(Math.exp(-e.deltaY / 200), p.x, p.y);
  }
}
