"""``/docs`` and ``/redoc`` served from assets inside an installed package (fastapi-offline ships Swagger
UI and ReDoc), so the API documentation works on a machine without internet."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_URL = "/static/docs"


def assets_dir() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


def install(app: FastAPI) -> None:
    """Mount the assets and the two pages (the app must be created with docs_url=redoc_url=None)."""
    app.mount(STATIC_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    redirect = "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API", oauth2_redirect_url=redirect,
            swagger_js_url=f"{root}{STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC_URL}/favicon.png")

    @app.get(redirect, include_in_schema=False)
    async def swagger_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - ReDoc",
                              redoc_js_url=f"{root}{STATIC_URL}/redoc.standalone.js",
                              redoc_favicon_url=f"{root}{STATIC_URL}/favicon.png", with_google_fonts=False)
