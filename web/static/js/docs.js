// The API reference page (/docs/): Swagger UI, served from the binary, reading
// the contract at /openapi.yaml. A file of its own rather than an inline
// script, so that the page keeps the same Content-Security-Policy as the rest.
window.ui = SwaggerUIBundle({
  url: "/openapi.yaml",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
});
