-- moor in Neovim 0.11 or newer (init.lua). `cmd` is the moor of the Python environment
-- that has it installed, e.g. your project's .venv/bin/moor.
vim.lsp.config("moor", {
  cmd = { vim.fn.expand("~/project/.venv/bin/moor"), "lsp" },
  filetypes = {
    "markdown", -- memories
    "python", "javascript", "javascriptreact", "typescript", "typescriptreact",
    "go", "rust", "java",
  },
  root_markers = { "moor.toml", "moor.lock", ".git" },
})
vim.lsp.enable("moor")

-- :MoorReaffirm {reason} -- the memory in this buffer still holds for the code as it is now.
vim.api.nvim_create_user_command("MoorReaffirm", function(opts)
  local client = vim.lsp.get_clients({ name = "moor", bufnr = 0 })[1]
  if not client then return vim.notify("moor is not running here", vim.log.levels.WARN) end
  client:exec_cmd({
    title = "reaffirm",
    command = "moor.reaffirm",
    arguments = { vim.api.nvim_buf_get_name(0), opts.args },
  }, { bufnr = 0 }, function(err, result)
    if err then return vim.notify("moor: " .. err.message, vim.log.levels.ERROR) end
    vim.notify("moor: " .. table.concat(result.done, "; ")) -- a refusal is shown by moor
  end)
end, { nargs = "+", desc = "moor: reaffirm this memory, with the reason" })

-- Once a moor command answers: reload moor's buffers whose file it rewrote (follow; the
-- unmodified ones silently, as 'autoread' is on; a plain :checktime skips hidden buffers),
-- and mark as saved a buffer whose text is its file's again (a reason line moor removed).
vim.api.nvim_create_autocmd("LspRequest", {
  callback = function(args)
    local request, client = args.data.request, vim.lsp.get_client_by_id(args.data.client_id)
    if request.type == "complete" and request.method == "workspace/executeCommand"
      and client and client.name == "moor" then
      vim.schedule(function()
        for bufnr in pairs(client.attached_buffers) do
          vim.cmd.checktime(bufnr)
          local name = vim.api.nvim_buf_get_name(bufnr)
          if vim.bo[bufnr].modified and vim.fn.filereadable(name) == 1
            and vim.deep_equal(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), vim.fn.readfile(name)) then
            vim.bo[bufnr].modified = false
          end
        end
      end)
    end
  end,
})

-- Code lenses (how many memories are about each symbol): Neovim asks for them only when
-- told, and takes no refresh from the server.
vim.api.nvim_create_autocmd({ "LspAttach", "BufEnter", "CursorHold", "InsertLeave" }, {
  callback = function(args)
    if vim.lsp.get_clients({ name = "moor", bufnr = args.buf })[1] then
      vim.lsp.codelens.refresh({ bufnr = args.buf })
    end
  end,
})
