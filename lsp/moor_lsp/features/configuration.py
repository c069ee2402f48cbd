"""Settings (section `moor`, see `moor_lsp.settings`): where they come from and when.

* `initializationOptions` (the VS Code client sends `{"severity": {...}, "trusted": ...}`)
  are read when the client is ready, and win over everything else;
* `workspace/configuration` (section `moor`, scoped to the workspace root) is pulled after
  `initialized` when the client supports it, and again on every
  `workspace/didChangeConfiguration`; a client that cannot be asked is taken at its word:
  `params.settings["moor"]`.

A value that cannot be used is shown once (`window/showMessage`, naming the key and the
value) and only that key falls back. When the settings in effect change, every feature is
told (`Feature.on_settings`); the diagnostics are re-graded and re-published.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from moor_lsp.features import Feature
from moor_lsp.settings import Layer, Settings, read_layer

logger = logging.getLogger("moor_lsp.configuration")
SECTION = "moor"
REGISTRATION_ID = "moor-configuration"
PULL_TIMEOUT = 5.0


class Configuration(Feature):
    name = "configuration"

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.from_client = Layer()
        self.from_options = Layer()

    def register(self) -> None:
        self.handle(types.WORKSPACE_DID_CHANGE_CONFIGURATION, self.did_change_configuration, None)

    @property
    def can_pull(self) -> bool:
        return bool(self.server.capability("workspace.configuration"))

    async def on_initialized(self) -> None:
        self.from_options = self._read(self.server.initialization_options, "initializationOptions")
        if self.can_pull:
            self.from_client = await self._pull()
        if self.server.capability("workspace.did_change_configuration.dynamic_registration"):
            self.server.spawn(self._register_with_client())
        await self._apply()

    async def _pull(self) -> Layer:
        scope = self.server.root.as_uri() if self.server.root is not None else None
        try:
            values = await asyncio.wait_for(
                self.server.workspace_configuration_async(
                    types.ConfigurationParams(
                        items=[types.ConfigurationItem(scope_uri=scope, section=SECTION)]
                    )
                ),
                PULL_TIMEOUT,
            )
        except Exception as error:  # refused, or never answered: keep what we had
            logger.warning("could not read the client's `%s` settings: %r", SECTION, error)
            return self.from_client
        return self._read(values[0] if values else None, "workspace/configuration")

    async def _register_with_client(self) -> None:
        await self.server.register_with_client(
            REGISTRATION_ID,
            types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            types.DidChangeConfigurationRegistrationOptions(section=SECTION),
            "report setting changes",
        )

    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        if self.can_pull:
            self.from_client = await self._pull()
        else:
            settings = params.settings
            raw = settings.get(SECTION) if isinstance(settings, dict) else None
            self.from_client = self._read(raw, "workspace/didChangeConfiguration")
        await self._apply()

    def _read(self, raw: object, source: str) -> Layer:
        layer, problems = read_layer(raw, source)
        for problem in problems:
            logger.warning("%s", problem)
            self.server.show_once(problem, types.MessageType.Warning)
        return layer

    async def _apply(self) -> None:
        settings = Settings.merge(self.from_client, self.from_options)
        if settings == self.server.settings:
            return
        logger.info("settings: %s", settings)
        self.server.settings = settings
        for feature in self.server.features:
            try:
                await feature.on_settings(settings)
            except Exception as error:
                feature.report("applying new settings failed", error)
