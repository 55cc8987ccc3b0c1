#!/bin/sh
cat > /app/counter.sh <<'SCRIPT'
#!/bin/sh
n=$(cat /app/.count 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > /app/.count
echo "$n"
SCRIPT
