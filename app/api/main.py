"""The API router: every resource's router, collected once."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.routes import bom, gate, health, policy, repos, reviews, vet, webhooks

api_router = APIRouter()
for module in (vet, gate, repos, bom, policy, reviews, webhooks, health):
    api_router.include_router(module.router)
