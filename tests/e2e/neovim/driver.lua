-- Drives a real Neovim through the scenario of tests/e2e/editor_scenario.py and writes
-- what Neovim shows to the results file. Run as
--   nvim --headless --clean -u tests/e2e/neovim/driver.lua
-- with MOOR_E2E_SCENARIO (the scenario's JSON) and MOOR_E2E_CONFIG (which set-up file of
-- this folder to use, as docs/editors.md shows it; only its moor path is replaced).
-- MOOR_E2E_STEPS=short goes from the code lenses straight to the reaffirm by reason line (no
-- other code action, no completion). Every wait polls with a deadline (vim.wait), never sleeps.

local spec = vim.json.decode(table.concat(vim.fn.readfile(vim.env.MOOR_E2E_SCENARIO), "\n"))
local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
local results = { steps = {}, actions = {} }
local started = vim.uv.hrtime()

local function elapsed()
  return (vim.uv.hrtime() - started) / 1e9
end

local function write_results()
  results.seconds = elapsed()
  local file = assert(io.open(spec.results, "w"))
  file:write(vim.json.encode(results))
  file:close()
end

local function fail(message)
  error({ moor_e2e = message })
end

--- Waits until `done()` is true; fails with `what` at the deadline.
local function wait_for(what, done)
  if not vim.wait(spec.timeout * 1000, done, 20) then
    fail("timed out after " .. spec.timeout .. " s waiting for " .. what)
  end
end

-- docs/editors.md's set-up, with this checkout's moor.
local config = table.concat(vim.fn.readfile(here .. "/" .. vim.env.MOOR_E2E_CONFIG), "\n")
local placeholder = 'vim.fn.expand("~/project/.venv/bin/moor")'
assert(config:find(placeholder, 1, true), "the set-up names no moor to replace")
config = config:gsub(vim.pesc(placeholder), function()
  return string.format("%q", spec.moor)
end)

-- The person's part: every question (vim.ui.select) recorded, answered with the choice
-- titled `pick` when the scenario set one, else with the first.
local pick = nil
results.questions = {}
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(results.questions, { message = opts.prompt, titles = titles })
  for i, title in ipairs(titles) do
    if title == pick then
      return on_choice(items[i], i)
    end
  end
  on_choice(items[1], 1)
end

-- What Neovim tells the person (vim.notify), recorded.
results.notified = {}
vim.notify = function(message, level)
  table.insert(results.notified, { message = message, level = level or vim.log.levels.INFO })
end

local function bufnr_of(name)
  return vim.fn.bufnr(spec.memories[name])
end

local function moor_client()
  return vim.lsp.get_clients({ name = "moor" })[1]
end

--- moor's diagnostics on a memory's buffer, as Neovim holds them (0-based, byte columns
--- converted to characters so they compare with the file's text).
local function shown(name)
  local bufnr = bufnr_of(name)
  if bufnr < 0 then
    return nil
  end
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "moor" then
      local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1] or ""
      local end_line = vim.api.nvim_buf_get_lines(bufnr, d.end_lnum, d.end_lnum + 1, false)[1]
        or ""
      table.insert(items, {
        code = d.code,
        message = d.message,
        line = d.lnum,
        col = vim.str_utfindex(line, "utf-32", d.col, false),
        end_line = d.end_lnum,
        end_col = vim.str_utfindex(end_line, "utf-32", d.end_col, false),
      })
    end
  end
  table.sort(items, function(a, b)
    return a.line < b.line or (a.line == b.line and a.col < b.col)
  end)
  return items
end

local function record(step, names)
  results.steps[step] = elapsed()
  results[step] = {}
  for _, name in ipairs(names) do
    results[step][name] = shown(name)
  end
end

local function has_code(name, code)
  local items = shown(name)
  if not items then
    return false
  end
  for _, d in ipairs(items) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function none(name)
  local items = shown(name)
  return items ~= nil and #items == 0
end

local function open(name)
  vim.cmd.edit(vim.fn.fnameescape(spec.memories[name]))
end

--- A request from the moor client, waited for; returns err, result.
local function request(method, params, bufnr)
  local client = moor_client()
  local answered, err, result = false, nil, nil
  client:request(method, params, function(e, r)
    answered, err, result = true, e, r
  end, bufnr)
  wait_for(method, function()
    return answered
  end)
  return err, result
end

--- Executes a command as Neovim's code action menu does (client:exec_cmd).
local function execute(command, bufnr)
  local answered, err, result = false, nil, nil
  moor_client():exec_cmd(command, { bufnr = bufnr }, function(e, r)
    answered, err, result = true, e, r
  end)
  wait_for(command.command, function()
    return answered
  end)
  return err, result
end

local function code_actions(name)
  local bufnr = bufnr_of(name)
  local offered = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp_diagnostic = d.user_data and d.user_data.lsp
    if d.source == "moor" and lsp_diagnostic then
      local err, actions = request("textDocument/codeAction", {
        textDocument = { uri = vim.uri_from_bufnr(bufnr) },
        range = lsp_diagnostic.range,
        context = { diagnostics = { lsp_diagnostic } },
      }, bufnr)
      if err then
        fail("textDocument/codeAction on " .. name .. " answered " .. vim.inspect(err))
      end
      for _, action in ipairs(actions or {}) do
        -- A CodeAction holds its Command; a bare Command is one.
        local command = type(action.command) == "table" and action.command or action
        table.insert(offered, { title = action.title, command = command, edit = action.edit })
      end
    end
  end
  return offered
end

--- The code actions offered on one line of a memory, without a diagnostic there.
local function code_actions_at(name, line)
  local bufnr = bufnr_of(name)
  local at = { line = line, character = 0 }
  local err, actions = request("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = at, ["end"] = at },
    context = { diagnostics = {} },
  }, bufnr)
  if err then
    fail("textDocument/codeAction on " .. name .. " answered " .. vim.inspect(err))
  end
  local offered = {}
  for _, action in ipairs(actions or {}) do
    local command = type(action.command) == "table" and action.command or action
    table.insert(offered, { title = action.title, command = command })
  end
  return offered
end

--- The action titled `title` on `line` of a memory, once the server offers it (it may
--- not have seen the buffer's latest change yet).
local function offered_action(name, line, title)
  local found = nil
  local deadline = vim.uv.now() + spec.timeout * 1000
  while not found do
    for _, action in ipairs(code_actions_at(name, line)) do
      if action.title == title then
        found = action
      end
    end
    if not found and vim.uv.now() > deadline then
      fail("no code action " .. title .. " on line " .. line .. " of " .. name)
    end
    if not found then
      vim.wait(100, function()
        return false
      end)
    end
  end
  return found
end

local function buffer_text(name)
  local bufnr = bufnr_of(name)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
    .. (vim.bo[bufnr].eol and "\n" or "")
end

--- The line of the buffer where the server put a reason line, or nil.
local function reason_line(name)
  for number, text in ipairs(vim.api.nvim_buf_get_lines(bufnr_of(name), 0, -1, false)) do
    if text:find("<!-- moor ", 1, true) == 1 then
      return number - 1, text
    end
  end
  return nil
end

local function run_action(name, action)
  local bufnr = bufnr_of(name)
  local entry = { memory = name, title = action.title, command = action.command.command }
  local err, result = execute(action.command, bufnr)
  entry.error = err and { code = err.code, message = err.message } or nil
  entry.result = result
  table.insert(results.actions, entry)
  return entry
end

--- Reaffirms external.md (drifted again) with the reason written in its buffer: "Write my
--- own reason…", the reason after "because:", then the action on that line. Afterwards
--- the buffer is as saved: the line gone, unmodified.
local function reaffirm_by_reason_line()
  local own = spec.reaffirm_own
  local rewritten = assert(io.open(spec.app, "w"))
  rewritten:write(own.app)
  rewritten:close()
  wait_for("external.md's drifted diagnostic after src/app.py was rewritten again", function()
    return has_code("external", "drifted")
  end)
  local reaffirm = nil
  for _, action in ipairs(code_actions("external")) do
    local arguments = action.command.arguments or {}
    if not reaffirm and action.command.command == "moor.reaffirm" and #arguments == 1 then
      reaffirm = action
    end
  end
  if not reaffirm then
    fail("no reaffirm action on external.md")
  end
  pick = own.write_own
  run_action("external", reaffirm)
  pick = nil
  wait_for("the reason line in external.md", function()
    return reason_line("external") ~= nil
  end)
  local own_line, own_text = reason_line("external")
  local own_written = own_text:gsub("because:%s*", "because: " .. own.reason .. " ", 1)
  local external = bufnr_of("external")
  vim.api.nvim_buf_set_lines(external, own_line, own_line + 1, false, { own_written })
  local modified_with_line = vim.bo[external].modified -- the control: unsaved, as it should
  local reasoned = run_action("external", offered_action("external", own_line, own.written))
  results.reasoned = { done = reasoned.result, error = reasoned.error }
  results.reasoned.modified_with_line = modified_with_line
  results.reasoned.line_gone = vim.wait(spec.timeout * 1000, function()
    return reason_line("external") == nil
  end, 20)
  -- Not a failure at the deadline: the test says what it saw.
  vim.wait(spec.timeout * 1000, function()
    return not vim.bo[external].modified
  end, 20)
  results.reasoned.modified = vim.bo[external].modified
  results.reasoned.text = buffer_text("external")
end

local function scenario()
  assert(load(config, "moor set-up"))()
  for _, name in ipairs(spec.open_at_start) do
    open(name)
  end
  wait_for("the moor client", function()
    return moor_client() ~= nil
  end)
  results.client_seconds = elapsed()
  wait_for("drifted.md and moved.md diagnostics", function()
    return has_code("drifted", "drifted") and has_code("moved", "moved")
  end)
  record("start", { "drifted", "moved", "external" })

  -- An external change: the file is rewritten behind Neovim's back.
  local app = assert(io.open(spec.app, "w"))
  app:write(spec.app_external)
  app:close()
  wait_for("external.md's drifted diagnostic after src/app.py was rewritten", function()
    return has_code("external", "drifted")
  end)
  record("external", { "external" })

  -- A reaffirm on the command line (as Helix users give the reason): moor.lock changes on disk.
  local cli = vim.system({ spec.moor, "reaffirm", spec.memories.external, "--why", spec.reason }, {
    cwd = spec.root,
    text = true,
  }):wait()
  results.cli_reaffirm = { code = cli.code, output = cli.stdout .. cli.stderr }
  wait_for("external.md's diagnostics to go after `moor reaffirm` on the command line", function()
    return none("external")
  end)
  record("cli_reaffirmed", { "external" })

  -- A reaffirm with a typed reason, as the set-up's :MoorReaffirm gives it.
  vim.cmd.buffer(bufnr_of("drifted"))
  local before = #results.notified
  vim.cmd("MoorReaffirm " .. spec.reason)
  local answer = nil
  wait_for(":MoorReaffirm's answer", function()
    for i = before + 1, #results.notified do
      if results.notified[i].message:find("^moor: ") then
        answer = results.notified[i]
        return true
      end
    end
    return false
  end)
  results.reaffirm = { message = answer.message, error = answer.level >= vim.log.levels.ERROR }
  wait_for("drifted.md's diagnostics to go after the reaffirm", function()
    return none("drifted")
  end)
  record("reaffirmed", { "drifted" })

  open("late")
  wait_for("late.md's diagnostic (opened after start-up)", function()
    return has_code("late", "drifted")
  end)
  record("late", { "late" })

  -- The code file: the set-up asks for code lenses (memories about each symbol) itself.
  vim.cmd.edit(vim.fn.fnameescape(spec.app))
  local app = vim.api.nvim_get_current_buf()
  local ok = vim.wait(spec.timeout * 1000, function()
    return #vim.lsp.codelens.get(app) > 0
  end, 50)
  results.lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(app)) do
    table.insert(results.lenses, {
      line = lens.range.start.line,
      title = lens.command and lens.command.title or vim.NIL,
    })
  end
  results.lenses_shown = ok
  if vim.env.MOOR_E2E_STEPS == "short" then
    return reaffirm_by_reason_line()
  end

  -- Every code action offered on late.md (drifted) and moved.md (moved): first those that
  -- write nothing, then the reaffirm quick fix, then follow.
  local writing = { ["moor.reaffirm"] = 1, ["moor.follow"] = 2 }
  local queue = {}
  for _, name in ipairs({ "late", "moved" }) do
    for _, action in ipairs(code_actions(name)) do
      table.insert(queue, { name = name, action = action })
    end
  end
  results.offered = vim.tbl_map(function(item)
    return { memory = item.name, title = item.action.title, command = item.action.command.command }
  end, queue)
  table.sort(queue, function(a, b)
    return (writing[a.action.command.command] or 0) < (writing[b.action.command.command] or 0)
  end)
  for _, item in ipairs(queue) do
    local entry = run_action(item.name, item.action)
    if entry.command == "moor.reaffirm" and not entry.error and not results.quick_reaffirmed then
      vim.wait(spec.timeout * 1000, function()
        return none("late")
      end, 20)
      record("quick_reaffirmed", { "late" })
    elseif entry.command == "moor.follow" then
      -- The followed text reaches the buffer (moor writes the file; the set-up reloads
      -- it), and the buffer is left as saved: unmodified, and `:w` warns of nothing.
      local bufnr = bufnr_of("moved")
      wait_for("the followed reference in moved.md's buffer", function()
        return buffer_text("moved"):find('"src/util.py#helper"', 1, true) ~= nil
      end)
      results.followed_buffer = buffer_text("moved")
      results.followed_modified = vim.bo[bufnr].modified
      if not vim.bo[bufnr].modified then -- else `:w` would ask whether to overwrite
        vim.v.warningmsg = ""
        vim.api.nvim_buf_call(bufnr, function()
          vim.cmd("silent write")
        end)
        results.followed_write_warning = vim.v.warningmsg
      end
      vim.wait(spec.timeout * 1000, function()
        return none("moved")
      end, 20)
      record("followed", { "moved" })
    end
  end

  -- Forget a memory through its code action, with the reason written in the buffer:
  -- first answered Cancel (nothing changes), then "Write my own reason…".
  open("wrong")
  wait_for("the moor client on wrong.md", function()
    return vim.lsp.get_clients({ name = "moor", bufnr = bufnr_of("wrong") })[1] ~= nil
  end)
  local forget = offered_action("wrong", 0, spec.forget.title)
  results.forget = { offered = forget.title, before = buffer_text("wrong") }
  pick = "Cancel"
  local cancelled = run_action("wrong", forget)
  results.forget.cancelled = cancelled.result
  results.forget.kept = vim.uv.fs_stat(spec.memories.wrong) ~= nil
  pick = spec.forget.write_own
  local asked = run_action("wrong", forget)
  results.forget.asked = asked.result
  wait_for("the reason line in wrong.md", function()
    return reason_line("wrong") ~= nil
  end)
  local line, text = reason_line("wrong")
  results.forget.line = text
  -- The person writes the reason after "because:" (the buffer is not saved).
  local written = text:gsub("because:%s*", "because: " .. spec.forget.reason .. " ", 1)
  vim.api.nvim_buf_set_lines(bufnr_of("wrong"), line, line + 1, false, { written })
  local done = run_action("wrong", offered_action("wrong", line, spec.forget.written))
  results.forget.done = done.result
  results.forget.error = done.error
  -- moor closes the forgotten memory's buffer (a DeleteFile edit), so `:w` cannot bring
  -- it back.
  local function closed()
    local bufnr = bufnr_of("wrong")
    return bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr)
  end
  wait_for("wrong.md's buffer to close, or its reason line to leave it", function()
    return closed() or reason_line("wrong") == nil
  end)
  results.forget.closed = closed()
  if not results.forget.closed then
    results.forget.after = buffer_text("wrong")
  end
  results.forget.exists = vim.uv.fs_stat(spec.memories.wrong) ~= nil

  reaffirm_by_reason_line()

  -- Completion in a new memory's `about:` list (not saved): what Neovim's own completion
  -- code (`vim.lsp.completion`, behind <C-x><C-o>) makes of moor's answer, past the first
  -- path segment and past a `.` in a symbol.
  vim.cmd.edit(vim.fn.fnameescape(spec.root .. "/memories/typing.md"))
  local typing = vim.api.nvim_get_current_buf()
  local typed = spec.completion
  local lines = { "---", "about:" }
  for _, ref in ipairs(typed) do
    table.insert(lines, "  - " .. ref)
  end
  vim.list_extend(lines, { "---", "# Typing" })
  vim.api.nvim_buf_set_lines(typing, 0, -1, false, lines)
  wait_for("the moor client on typing.md", function()
    return vim.lsp.get_clients({ name = "moor", bufnr = typing })[1] ~= nil
  end)
  local client = vim.lsp.get_clients({ name = "moor", bufnr = typing })[1]
  results.completion = {}
  for index, ref in ipairs(typed) do
    local lnum = index + 1 -- 0-based: under `---` and `about:`
    local line = lines[lnum + 1]
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(typing) },
      position = { line = lnum, character = #line },
    }
    local answer = client:request_sync("textDocument/completion", params, 10000, typing)
    local words = {}
    if answer and answer.result then
      local keyword = vim.fn.match(line, "\\k*$") -- where Neovim's own word starts
      local matches, start = vim.lsp.completion._convert_results(
        line, lnum, #line, client.id, keyword, nil, answer.result, client.offset_encoding
      )
      for _, match in ipairs(matches) do
        table.insert(words, line:sub(1, start or keyword) .. match.word)
      end
    end
    results.completion[ref] = words
  end
end

local function main()
  local ok, problem = xpcall(scenario, function(e)
    if type(e) == "table" and e.moor_e2e then
      return e.moor_e2e
    end
    return debug.traceback(tostring(e), 2)
  end)
  if not ok then
    results.fatal = problem
  end
  results.lsp_log = vim.lsp.log.get_filename()
  write_results()
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:stop()
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  vim.cmd("qall!")
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    vim.schedule(main)
  end,
})
