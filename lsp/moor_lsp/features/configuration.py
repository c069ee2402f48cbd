"""Settings (section `moor`, see `moor_lsp.settings`): where they come from and when.

* `initializationOptions` (the VS Code client sends `{"severity": {...}, "trusted": ...}`)
  are read when the client is ready, and win over everything else;
* `workspace/configuration` (section `moor`, `scopeUri` the root: each root has its own
  settings) is pulled for each root when it is added, after `initialized`, when the
  client supports it, and again for every root on each `workspace/didChangeConfiguration`;
  a client that cannot be asked is taken at its word, for every root:
  `params.settings["moor"]`.

A value that cannot be used is shown once (`window/showMessage`, naming the key and the
value) and only that key falls back. When the settings in effect in a root change, every
feature is told (`Feature.on_settings`); that root's diagnostics are re-graded and
re-published. `trusted` comes only from initializationOptions, so it is the same in every
root (`server.settings` holds it).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from moor_lsp.features import Feature
from moor_lsp.settings import Layer, Settings, read_layer

if TYPE_CHECKING:
    from moor_lsp.folder import Folder

logger = logging.getLogger("moor_lsp.configuration")
SECTION = "moor"
REGISTRATION_ID = "moor-configuration"
PULL_TIMEOUT = 5.0


class Configuration(Feature):
    name = "configuration"

    def __init__(self, server: Any) -> None:
        super().__init__(server)
        self.from_client: dict[Path, Layer] = {}  # per root
        self.pushed = Layer()  # what a client that cannot be asked said, for every root
        self.from_options = Layer()

    def register(self) -> None:
        self.handle(types.WORKSPACE_DID_CHANGE_CONFIGURATION, self.did_change_configuration, None)

    @property
    def can_pull(self) -> bool:
        return bool(self.server.capability("workspace.configuration"))

    async def on_initialized(self) -> None:
        self.from_options = self._read(self.server.initialization_options, "initializationOptions")
        self.server.settings = Settings.merge(self.from_options)
        if self.server.capability("workspace.did_change_configuration.dynamic_registration"):
            self.server.spawn(self._register_with_client())

    async def on_folder_added(self, folder: Folder) -> None:
        if self.can_pull:
            self.from_client[folder.root] = await self._pull(folder)
        await self._apply(folder)

    async def on_folder_removed(self, folder: Folder) -> None:
        self.from_client.pop(folder.root, None)

    async def _pull(self, folder: Folder) -> Layer:
        try:
            values = await asyncio.wait_for(
                self.server.workspace_configuration_async(
                    types.ConfigurationParams(
                        items=[
                            types.ConfigurationItem(scope_uri=folder.root.as_uri(), section=SECTION)
                        ]
                    )
                ),
                PULL_TIMEOUT,
            )
        except Exception as error:  # refused, or never answered: keep what we had
            logger.warning("could not read the client's `%s` settings: %r", SECTION, error)
            return self.from_client.get(folder.root, Layer())
        return self._read(values[0] if values else None, "workspace/configuration")

    async def _register_with_client(self) -> None:
        await self.server.register_with_client(
            REGISTRATION_ID,
            types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            types.DidChangeConfigurationRegistrationOptions(section=SECTION),
            "report setting changes",
        )

    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        if not self.can_pull:
            settings = params.settings
            raw = settings.get(SECTION) if isinstance(settings, dict) else None
            self.pushed = self._read(raw, "workspace/didChangeConfiguration")
        for folder in list(self.server.folders.values()):
            if self.can_pull:
                self.from_client[folder.root] = await self._pull(folder)
            await self._apply(folder)

    def _read(self, raw: object, source: str) -> Layer:
        layer, problems = read_layer(raw, source)
        for problem in problems:
            logger.warning("%s", problem)
            self.server.show_once(problem, types.MessageType.Warning)
        return layer

    async def _apply(self, folder: Folder) -> None:
        if folder.closed:
            return
        client = self.from_client.get(folder.root, Layer()) if self.can_pull else self.pushed
        settings = Settings.merge(client, self.from_options)
        if settings == folder.settings:
            return
        logger.info("settings of %s: %s", folder.root, settings)
        folder.settings = settings
        for feature in self.server.features:
            try:
                await feature.on_settings(folder, settings)
            except Exception as error:
                feature.report("applying new settings failed", error)
