"""The API router: every resource's router, collected once."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.routes import gate, health, policy, vet, webhooks

api_router = APIRouter()
for module in (vet, gate, policy, health, webhooks):
    api_router.include_router(module.router)
