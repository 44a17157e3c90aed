// Reading QR codes from the camera: the browser's BarcodeDetector where there
// is one, else zxing-wasm (web/vendor), a few frames a second.

const FRAMES_PER_SECOND = 6;

/** @typedef {(video: HTMLVideoElement) => Promise<string[]>} Reader */

/**
 * A reader of the QR codes in a video's current frame.
 * @returns {Promise<Reader>}
 */
async function detector() {
  if ("BarcodeDetector" in window) {
    const formats = await BarcodeDetector.getSupportedFormats();
    if (formats.includes("qr_code")) {
      const d = new BarcodeDetector({ formats: ["qr_code"] });
      return async (video) => (await d.detect(video)).map((b) => b.rawValue);
    }
  }
  const zxing = window.ZXingWASM;
  if (!zxing) throw new Error("this browser cannot read QR codes (and the decoder is not installed: run make)");
  zxing.prepareZXingModule({
    // Beside this module's own URL, so under the same version (kept like it).
    overrides: { locateFile: (path, prefix) => (path.endsWith(".wasm") ? new URL(`../../vendor/zxing-wasm/${path}`, import.meta.url).href : prefix + path) },
  });
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  if (!context) throw new Error("this browser cannot draw the camera's frames");
  return async (video) => {
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    if (!canvas.width) return [];
    context.drawImage(video, 0, 0);
    const image = context.getImageData(0, 0, canvas.width, canvas.height);
    const found = await zxing.readBarcodes(image, { formats: ["QRCode"], maxNumberOfSymbols: 1 });
    return found.filter((b) => b.isValid).map((b) => b.text);
  };
}

/**
 * Starts the camera in video and calls onCode with each code read (the same
 * code again only after a pause). Returns a function that stops it.
 * @param {HTMLVideoElement} video
 * @param {(code: string) => void} onCode
 * @returns {Promise<() => void>}
 */
export async function startCamera(video, onCode) {
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
  video.srcObject = stream;
  video.hidden = false;
  await video.play();
  const read = await detector();
  let last = "", lastAt = 0, stopped = false, busy = false;
  const timer = setInterval(async () => {
    if (stopped || busy) return;
    busy = true;
    try {
      for (const code of await read(video)) {
        const now = Date.now();
        if (code && (code !== last || now - lastAt > 3000)) {
          last = code;
          lastAt = now;
          onCode(code);
        }
      }
    } catch {
      /* a frame that could not be read: the next one */
    } finally {
      busy = false;
    }
  }, 1000 / FRAMES_PER_SECOND);
  return () => {
    stopped = true;
    clearInterval(timer);
    stream.getTracks().forEach((t) => t.stop());
    video.hidden = true;
  };
}
