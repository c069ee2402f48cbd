-- moor in Neovim 0.9 or 0.10 (init.lua). `cmd` is the moor of the Python environment
-- that has it installed, e.g. your project's .venv/bin/moor.
vim.api.nvim_create_autocmd("FileType", {
  pattern = {
    "markdown", -- memories
    "python", "javascript", "javascriptreact", "typescript", "typescriptreact",
    "go", "rust", "java",
  },
  callback = function(args)
    local marker = vim.fs.find({ "moor.toml", "moor.lock", ".git" }, {
      upward = true,
      path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)),
    })[1]
    if not marker then return end
    vim.lsp.start({
      name = "moor",
      cmd = { vim.fn.expand("~/project/.venv/bin/moor"), "lsp" },
      root_dir = vim.fs.dirname(marker),
      handlers = {
        -- Once moor's edit is in (a reason line it removed): mark as saved a buffer whose
        -- text is its file's again, as 0.11's set-up does when a command answers.
        ["workspace/applyEdit"] = function(err, params, ctx, config)
          local answer = vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, config)
          local client = vim.lsp.get_client_by_id(ctx.client_id)
          for bufnr in pairs(client and client.attached_buffers or {}) do
            local name = vim.api.nvim_buf_get_name(bufnr)
            if vim.bo[bufnr].modified and vim.fn.filereadable(name) == 1
              and vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), vim.fn.readfile(name)) then
              vim.bo[bufnr].modified = false
            end
          end
          return answer
        end,
      },
    }, { bufnr = args.buf })
  end,
})

-- :MoorReaffirm {reason} -- the memory in this buffer still holds for the code as it is now.
vim.api.nvim_create_user_command("MoorReaffirm", function(opts)
  local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = "moor", bufnr = 0 })
  if not clients[1] then return vim.notify("moor is not running here", vim.log.levels.WARN) end
  clients[1].request("workspace/executeCommand", {
    command = "moor.reaffirm",
    arguments = { vim.api.nvim_buf_get_name(0), opts.args },
  }, function(err, result)
    if err then return vim.notify("moor: " .. err.message, vim.log.levels.ERROR) end
    vim.notify("moor: " .. table.concat(result.done, "; ")) -- a refusal is shown by moor
  end, 0)
end, { nargs = "+", desc = "moor: reaffirm this memory, with the reason" })

-- Follow rewrites a memory's file, not its buffer: reload a buffer whose file changed on
-- disk (unmodified ones silently: 'autoread' is on) when you come back to it or pause.
vim.api.nvim_create_autocmd({ "FocusGained", "BufEnter", "CursorHold" }, {
  callback = function(args)
    if vim.fn.getcmdwintype() == "" then vim.cmd.checktime(args.buf) end
  end,
})

-- Code lenses (how many memories are about each symbol): Neovim asks for them only when
-- told, and takes no refresh from the server.
vim.api.nvim_create_autocmd({ "LspAttach", "BufEnter", "CursorHold", "InsertLeave" }, {
  callback = function(args)
    local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = "moor", bufnr = args.buf })
    if clients[1] then vim.lsp.codelens.refresh() end
  end,
})
